// Two tabs on one session: prompts, replies and approval decisions show in both.
import { expect, openSession, sendChat, startSession, test, transcript } from './fixtures';

test('two tabs on one session stay in sync', async ({ loggedIn: a, duet }) => {
  const id = await startSession(a, 'demo');
  const b = await a.context().newPage();
  await openSession(b, duet, id);

  await sendChat(a, 'hello from tab A');
  for (const p of [a, b]) {
    await expect(p.locator('[data-kind=assistant]').last()).toContainText('You said “hello from tab A”');
  }

  await sendChat(b, 'run echo from-tab-b');
  const cardA = a.locator('[data-kind=tool]').last();
  const cardB = b.locator('[data-kind=tool]').last();
  await expect(cardA).toHaveAttribute('data-tool-status', 'awaiting_approval');
  await expect(cardB).toHaveAttribute('data-tool-status', 'awaiting_approval');
  await cardA.getByRole('button', { name: 'Allow' }).click();
  // B never clicked: the server's `approval` message flips its card.
  await expect(cardB.locator('.approval-done')).toHaveText('Allowed in the browser.');
  await expect(cardB).toHaveAttribute('data-tool-status', 'done');
  await expect(b.getByRole('status')).toContainText('Idle');
  await expect(a.getByRole('status')).toContainText('Idle');
  expect(await transcript(b)).toEqual(await transcript(a));
});
