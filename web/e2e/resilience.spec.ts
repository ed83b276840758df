// Reconnects: the chat resumes from the last seq it saw, losing and repeating nothing.
import { expect, openSession, sendChat, startSession, test, transcript, waitGreeted } from './fixtures';

test('a socket killed mid-reply reconnects and the chat is complete, without duplicates', async ({ loggedIn: page, duet }) => {
  const id = await startSession(page, 'demo');
  await sendChat(page, 'first prompt');
  await expect(page.getByRole('status')).toContainText('Idle');
  await sendChat(page, 'a second prompt, cut off while the reply streams');
  await expect(page.getByRole('status')).toContainText('Responding');
  await page.evaluate(() => { window.duet?.dropConnection(); });
  await expect(page.locator('.banner')).toBeVisible();
  await waitGreeted(page);
  await expect(page.locator('.banner')).toBeHidden();
  await expect(page.getByRole('status')).toContainText('Idle');

  // A fresh tab reads the whole log from seq 0: the reconnected tab must match it.
  const fresh = await page.context().newPage();
  await openSession(fresh, duet, id);
  await expect(fresh.getByRole('status')).toContainText('Idle');
  const expected = await transcript(fresh);
  expect(expected.filter((l) => l.startsWith('user:'))).toHaveLength(2);
  expect(expected.filter((l) => l.startsWith('assistant:'))).toHaveLength(2);
  expect(await transcript(page)).toEqual(expected);
  expect(await page.evaluate(() => window.duet?.state()?.lastSeq)).toBe(await fresh.evaluate(() => window.duet?.state()?.lastSeq));
});

test('leaving for the back/forward cache closes the socket; coming back catches up', async ({ loggedIn: page, duet }) => {
  const id = await startSession(page, 'demo');
  const other = await page.context().newPage();
  await openSession(other, duet, id);
  // What the browser does around the bfcache, simulated on a live page.
  await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: true })));
  await expect.poll(() => page.evaluate(() => window.duet?.connected())).toBe(false);
  await sendChat(other, 'sent while the first tab was away');
  await expect(other.getByRole('status')).toContainText('Idle');
  await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pageshow', { persisted: true })));
  await waitGreeted(page);
  await expect(page.locator('[data-kind=user]', { hasText: 'sent while the first tab was away' })).toHaveCount(1);
  await expect(page.getByRole('status')).toContainText('Idle');
  expect(await transcript(page)).toEqual(await transcript(other));
});

test('an unsent prompt survives a reload of the tab, and is gone once sent', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('half a thought');
  await page.reload();
  await waitGreeted(page);
  await expect(box).toHaveValue('half a thought');
  await box.press('Enter');
  await expect(page.locator('.chat-log [data-kind=assistant]').last()).toContainText('You said “half a thought”');
  await expect(box).toHaveValue('');
  await page.reload();
  await waitGreeted(page);
  await expect(box).toHaveValue('');
});
