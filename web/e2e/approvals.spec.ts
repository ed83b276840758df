// Tool approvals: answered in the chat or in the terminal, the card follows.
import { expect, expectTerminal, sendChat, startSession, test } from './fixtures';

test('Allow in the chat runs the tool, and the terminal shows it', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, 'run echo allowed-from-chat');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card).toHaveAttribute('data-tool-status', 'awaiting_approval');
  await expect(page.getByRole('status')).toContainText('Waiting for your approval');
  await card.getByRole('button', { name: 'Allow' }).click();
  await expect(card).toHaveAttribute('data-tool-status', 'done');
  await expect(card.locator('.approval-done')).toHaveText('Allowed in the browser.');
  await expect(card.locator('.tool-result pre')).toContainText('allowed-from-chat');
  await expectTerminal(page, /allowed in the browser[\s\S]*allowed-from-chat/);
  await expect(page.getByRole('status')).toContainText('Idle');
});

test('an approval answered in the terminal flips the card in the chat', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, 'run echo answered-in-terminal');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card.getByRole('button', { name: 'Allow' })).toBeVisible();
  await expectTerminal(page, /\[y\] yes/);
  await page.locator('.terminal-pane .xterm').click();
  await page.keyboard.press('y');
  await expect(card.locator('.approval-done')).toHaveText('Allowed in the terminal.');
  await expect(card.getByRole('button', { name: 'Allow' })).toHaveCount(0);
  await expect(card).toHaveAttribute('data-tool-status', 'done');
});

test('Deny in the chat stops the tool', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, 'run echo never-printed');
  const card = page.locator('[data-kind=tool]').last();
  await card.getByRole('button', { name: 'Deny' }).click();
  await expect(card).toHaveAttribute('data-tool-status', 'denied');
  await expect(page.locator('[data-kind=assistant]').last()).toContainText('won\'t run');
  await expectTerminal(page, /denied/);
});

test('a file edit is shown as a diff and applied once allowed', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  await sendChat(page, 'edit notes.txt');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card.locator('figure.diff')).toBeVisible();
  await expect(card.locator('ins.diff-add')).toContainText('edited by the duet demo agent');
  await card.getByRole('button', { name: 'Allow' }).click();
  await expect(card).toHaveAttribute('data-tool-status', 'done');
});
