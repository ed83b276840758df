// Copying from the terminal: Ctrl+Shift+C and the context menu's Copy copy the
// selection while Ctrl+C stays the interrupt, and the bottom row is not
// clipped at 1400×900. Screenshot: test-results/screenshots/terminal-bottom-desktop.png.
import { expect, expectTerminal, startSession, test, typeInTerminal } from './fixtures';
import { DESKTOP, endSessions, login, screen, shellReady, shot } from './helpers';

test('Ctrl+Shift+C copies the terminal selection; the bottom row is not clipped', async ({ browser, duet }) => {
  test.setTimeout(120_000);
  const page = await login(browser, duet, { viewport: DESKTOP, permissions: ['clipboard-read', 'clipboard-write'] });
  try {
    await startSession(page, 'shell');
    await shellReady(page);
    await typeInTerminal(page, 'clear; echo copyme-$((40+2))');
    await page.keyboard.press('Enter');
    await expectTerminal(page, /^copyme-42$/m);
    // A terminal-only profile (shell) has no layout switch: the terminal fills the workspace.
    await expect(page.getByRole('button', { name: 'Terminal', exact: true })).toHaveCount(0);
    // Select the output line by double-clicking its word.
    const box = await page.locator('.terminal-host .xterm-screen').boundingBox();
    const d = await screen(page);
    const row = d?.lines.findIndex((l) => l.text === 'copyme-42') ?? -1;
    expect(row).toBeGreaterThanOrEqual(0);
    if (!box || !d) throw new Error('no terminal');
    const cellH = box.height / d.rows;
    const cellW = box.width / d.cols;
    await page.mouse.click(box.x + cellW * 2, box.y + cellH * (row + 0.5), { clickCount: 3 });
    await page.keyboard.press('Control+Shift+C');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('copyme-42');
    // Ctrl+C is still the interrupt.
    await page.keyboard.type('sleep 30');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+C');
    await expectTerminal(page, /\^C/);
    // The context menu's Copy: on a right click the terminal's focused textarea holds the selection, selected.
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.mouse.click(box.x + cellW * 2, box.y + cellH * (row + 0.5), { clickCount: 3 });
    await page.mouse.click(box.x + cellW * 2, box.y + cellH * (row + 0.5), { button: 'right' });
    await expect.poll(() => page.evaluate(() => {
      const ta = document.activeElement;
      return ta instanceof HTMLTextAreaElement ? ta.value.slice(ta.selectionStart, ta.selectionEnd) : '';
    })).toContain('copyme-42');
    // What the menu's Copy does: copy the page's selection.
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- what the browser's own Copy item does; no other API copies the page's selection
    await page.evaluate(() => document.execCommand('copy'));
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('copyme-42');
    // The bottom row sits inside the pane at 1400×900.
    const clip = await page.evaluate(() => {
      const host = document.querySelector('.terminal-host');
      const scr = document.querySelector('.terminal-host .xterm-screen');
      const pane = document.querySelector('.terminal-pane');
      if (!host || !scr || !pane) return null;
      const h = host.getBoundingClientRect();
      const s = scr.getBoundingClientRect();
      const p = pane.getBoundingClientRect();
      return { screenBottom: s.bottom, hostBottom: h.bottom, paneBottom: p.bottom, viewport: innerHeight };
    });
    expect(clip).not.toBeNull();
    expect(clip?.screenBottom ?? 1e9).toBeLessThanOrEqual(Math.min(clip?.hostBottom ?? 0, clip?.paneBottom ?? 0, clip?.viewport ?? 0) + 0.5);
    await page.screenshot({ path: shot('terminal-bottom-desktop') });
  } finally {
    await endSessions(page, duet);
    await page.context().close();
  }
});
