// The two views of one program stay in step: what is typed in either one shows in both.
import { expect, expectTerminal, sendChat, startSession, test, typeInTerminal } from './fixtures';

test('a prompt sent from the chat shows in the terminal and as a chat message', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, 'hello from the chat');
  await expect(page.locator('.chat-log [data-kind=user]', { hasText: 'hello from the chat' })).toHaveCount(1);
  await expectTerminal(page, /> hello from the chat/);
  const reply = page.locator('.chat-log [data-kind=assistant]').last();
  await expect(reply).toContainText('You said “hello from the chat”');
  await expect(page.getByRole('status')).toContainText('Idle');
  // The streamed text was replaced by the final message: one assistant item, not two.
  await expect(page.locator('.chat-log [data-kind=assistant]')).toHaveCount(1);
});

test('a prompt typed in the terminal shows in the chat', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await expectTerminal(page, /demo agent/);
  await typeInTerminal(page, 'typed into the terminal');
  await page.keyboard.press('Enter');
  await expect(page.locator('.chat-log [data-kind=user]', { hasText: 'typed into the terminal' })).toHaveCount(1);
  await expect(page.locator('.chat-log [data-kind=assistant]').last()).toContainText('You said “typed into the terminal”');
});

test('the status line follows the turn', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  const status = page.getByRole('status');
  await expect(status).toContainText('Idle');
  await sendChat(page, 'tell me something long');
  await expect(status).toContainText(/Thinking|Responding/);
  await expect(status).toContainText('Idle');
});

test('Stop in the chat interrupts the reply (Escape into the terminal)', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, 'please talk for a while');
  const status = page.getByRole('status');
  await expect(status).toContainText('Responding');
  await status.getByRole('button', { name: 'Stop' }).click();
  await expect(status).toContainText('Idle');
  await expectTerminal(page, /\(cancelled\)/);
  // The partial reply stays, as the agent's final (cut) message.
  const reply = page.locator('.chat-log [data-kind=assistant]');
  await expect(reply).toHaveCount(1);
  await expect(reply).not.toHaveClass(/streaming/);
  await expect(reply).not.toContainText('whichever answers first wins');
});
