// Tabbing into the terminal: it keeps Tab for the program (as a terminal
// must), so it shows that it has the keyboard (a focus ring) and how to get
// out (Ctrl+Shift+X, on screen, not only in screen-reader text).
import { apiCreate, endAll, expect, loginAt, openId, SIZE_NAMES, test } from './fixtures';

for (const size of SIZE_NAMES) {
  test(`the focused terminal has a ring and says how to leave it (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size);
    try {
      const id = await apiCreate(page, duet, 'demo');
      await openId(page, duet, id);
      await expect(page.getByRole('status').first()).toContainText('Idle');
      const textarea = page.locator('.terminal-pane:not(.terminal-probe) .xterm-helper-textarea');
      const hint = page.locator('.term-leave-hint');
      await expect(hint).toBeHidden();
      // From the message box, the keyboard's way in.
      await page.getByRole('textbox', { name: 'Message' }).focus();
      for (let i = 0; i < 12 && !(await textarea.evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab');
      await expect(textarea).toBeFocused();
      const ring = await page.locator('.terminal-pane:not(.terminal-probe) .terminal-host').evaluate((el) => {
        const cs = getComputedStyle(el);
        return { style: cs.outlineStyle, width: Number.parseFloat(cs.outlineWidth) };
      });
      expect(ring.style).toBe('solid');
      expect(ring.width).toBeGreaterThanOrEqual(2);
      await expect(hint).toBeVisible();
      await expect(hint).toHaveText('Ctrl+Shift+X leaves the terminal');
      // Tab stays in the terminal (the program's)…
      await page.keyboard.press('Tab');
      await expect(textarea).toBeFocused();
      // …and the key the hint names leads out, to the message box.
      await page.keyboard.press('Control+Shift+X');
      await expect(page.getByRole('textbox', { name: 'Message' })).toBeFocused();
      await expect(hint).toBeHidden();
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
