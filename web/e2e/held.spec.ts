// A prompt sent while the agent is busy is held by the server; every tab on
// the session shows it as queued (not only the tab that sent it, which shows
// it once), a reloaded tab too, and it leaves every tab when the agent
// takes it.
import { expect, openSession, sendChat, startSession, test } from './fixtures';

test('a held prompt shows as queued in every tab and after a reload, until the agent takes it', async ({ loggedIn: a, duet }) => {
  const id = await startSession(a, 'demo');
  const b = await a.context().newPage();
  await openSession(b, duet, id);

  // The tool waits for approval: the agent is busy, the next prompt is held.
  await sendChat(a, 'run echo busy');
  const card = a.locator('[data-kind=tool]').last();
  await expect(card).toHaveAttribute('data-tool-status', 'awaiting_approval');
  await sendChat(a, 'held from tab A');

  const queued = (p: typeof a) => p.locator('.chat-log .msg.pending[data-pending-state="queued"]');
  for (const p of [a, b]) {
    await expect(queued(p)).toHaveCount(1);
    await expect(queued(p).locator('.bubble')).toHaveText('held from tab A');
  }
  // Reloaded, both tabs learn it from the server's greeting.
  for (const p of [b, a]) {
    await p.reload();
    await expect(queued(p).locator('.bubble')).toHaveText('held from tab A');
    await expect(queued(p)).toHaveCount(1);
  }

  await b.locator('[data-kind=tool]').last().getByRole('button', { name: 'Allow' }).click();
  for (const p of [a, b]) {
    await expect(p.locator('[data-kind=assistant]').last()).toContainText('You said “held from tab A”');
    await expect(p.locator('.chat-log .msg.pending')).toHaveCount(0);
    await expect(p.locator('.chat-log [data-kind=user]', { hasText: 'held from tab A' })).toHaveCount(1);
  }
});
