// The keyboard: panels close on Escape, and the terminal, which takes Tab and
// Escape for the program, has a documented key that leads out of it.
import { expect, startSession, test } from './fixtures';

test('Escape closes the notifications panel and gives the bell the focus', async ({ loggedIn: page }) => {
  const bell = page.getByRole('button', { name: 'Notifications', exact: true });
  const panel = page.getByRole('dialog', { name: 'Notifications' });
  await bell.click();
  await expect(panel).toBeVisible();
  await expect(bell).toHaveAttribute('aria-expanded', 'true');
  // From a control in the panel.
  await panel.getByRole('spinbutton').focus();
  await page.keyboard.press('Escape');
  await expect(panel).toBeHidden();
  await expect(bell).toHaveAttribute('aria-expanded', 'false');
  await expect(bell).toBeFocused();
  // From the bell itself.
  await page.keyboard.press('Enter');
  await expect(panel).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(panel).toBeHidden();
});

test('Ctrl+Shift+X leads out of the terminal: to the message box, or to the top bar', async ({ loggedIn: page }) => {
  // The bytes the page sends to the PTY.
  const keys: number[] = [];
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => { if (typeof f.payload !== 'string') keys.push(...f.payload); });
  });
  await startSession(page, 'demo');
  const input = page.getByRole('textbox', { name: 'Terminal input' });
  const composer = page.getByRole('textbox', { name: 'Message' });
  // Said where a screen reader reads the terminal's input.
  await expect(input).toHaveAccessibleDescription(/Ctrl\+Shift\+X leaves the terminal/);
  await page.locator('.terminal-pane .xterm').click();
  await expect(input).toBeFocused();
  // Tab and Escape belong to the program.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Escape');
  await expect(input).toBeFocused();
  await page.keyboard.press('Control+Shift+X');
  await expect(composer).toBeFocused();
  expect(keys).toContain(0x09);
  expect(keys).toContain(0x1b);
  // The program never sees it (Ctrl+X would be 0x18).
  expect(keys).not.toContain(0x18);

  // Terminal only: the top bar's first control.
  await page.getByRole('button', { name: 'Terminal', exact: true }).click();
  await page.locator('.terminal-pane .xterm').click();
  await expect(input).toBeFocused();
  await page.keyboard.press('Control+Shift+X');
  await expect(page.getByRole('button', { name: 'Sessions' })).toBeFocused();
});
