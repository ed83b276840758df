// What the UI shows follows the session's side channel and its life: a
// terminal-only program gets just the terminal; slash commands point at the
// terminal; an ended program says how it ended, in the chat and over the terminal.
import { expect, expectTerminal, sendChat, startSession, test, typeInTerminal } from './fixtures';

test('a terminal-only session (shell) shows no chat UI, whatever layout was chosen', async ({ loggedIn: page }) => {
  // Chat alone was the last choice: a shell must still show its terminal, and only that.
  await page.evaluate(() => { localStorage.setItem('duet.layout', 'chat'); });
  await page.reload();
  await startSession(page, 'shell');
  await expect(page.locator('.terminal-pane')).toBeVisible();
  await expect(page.locator('.chat-pane')).toBeHidden();
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeHidden();
  await expect(page.getByRole('group', { name: 'Layout' })).toBeHidden();
  await expect(page.locator('.chat-empty')).toBeHidden();

  // Its exit shows over the terminal.
  await typeInTerminal(page, 'exit 3');
  await page.keyboard.press('Enter');
  const banner = page.locator('.term-banner');
  await expect(banner).toBeVisible();
  await expect(banner.locator('.term-banner-text')).toHaveText('The program exited with code 3.');
});

test('a program ended by a signal says which, over the terminal and in it', async ({ loggedIn: page }) => {
  await startSession(page, 'shell');
  await typeInTerminal(page, 'kill -KILL $$');
  await page.keyboard.press('Enter');
  await expect(page.locator('.term-banner .term-banner-text')).toHaveText('The program was ended by SIGKILL.');
  await expectTerminal(page, /\[the program was ended by SIGKILL\]/);
  await page.locator('.term-banner').getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.locator('.term-banner')).toBeHidden();
});

test('a chat session keeps its layout buttons', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await expect(page.getByRole('group', { name: 'Layout' })).toBeVisible();
  await expect(page.locator('.chat-pane')).toBeVisible();
});

test('a slash command sent from the chat shows as the user’s, pointing at the terminal', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await page.getByRole('button', { name: 'Chat', exact: true }).click();
  await expect(page.locator('.terminal-pane')).toBeHidden();
  await sendChat(page, '/help');
  const item = page.locator('.chat-log [data-kind=user][data-command]');
  await expect(item.locator('.bubble')).toHaveText('/help');
  await expect(item).toContainText('its output is in the terminal');
  await item.getByRole('button', { name: 'Show terminal' }).click();
  await expect(page.locator('.terminal-pane')).toBeVisible();
  await expect(page.locator('.terminal-pane textarea')).toBeFocused();
  await expectTerminal(page, /\/clear/);
});

test('the program’s exit shows in the chat and over the terminal', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, '/quit');
  await expect(page.locator('.chat-log [data-kind=exit]')).toHaveText('The program exited with code 0.');
  await expect(page.locator('.term-banner .term-banner-text')).toHaveText('The program exited with code 0.');
  await expect(page.getByRole('textbox', { name: 'Message' })).toBeDisabled();
  // A tab that opens it later is told the same, from the hello.
  await page.reload();
  await expect(page.locator('.chat-log [data-kind=exit]')).toHaveText('The program exited with code 0.');
  await expect(page.locator('.term-banner')).toBeVisible();
});
