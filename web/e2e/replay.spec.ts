// Replay (#/session/<id>/replay): a demo-agent session with a prompt and an
// approval, replayed. Seeking to a moment between the approval's request and
// its decision shows the terminal as it was then (xterm's buffer) and the chat
// of then (the prompt, a pending card, no decision); the end shows the
// decision and the reply; play at 8× moves on; the keyboard drives it.
import type { Page } from '@playwright/test';
import { expect, expectTerminal, sendChat, startSession, test, type Duet } from './fixtures';

interface Timed { seq: number; at?: number; event: { type?: string } }

async function timedEvents(page: Page, duet: Duet, id: string): Promise<Timed[]> {
  const text = await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/events?times=true`)).text();
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Timed);
}

const replayText = (page: Page): Promise<string> => page.evaluate(() => window.duet?.replayText() ?? Promise.resolve(''));
const position = (page: Page): Promise<number> => page.evaluate(() => window.duet?.replayPosition() ?? -1);

test('replay shows the terminal and the chat of any moment', async ({ loggedIn: page, duet }) => {
  const id = await startSession(page, 'demo');
  await sendChat(page, 'run echo replayed-output');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card).toHaveAttribute('data-tool-status', 'awaiting_approval');
  await expectTerminal(page, /\[y\] yes/);
  await card.getByRole('button', { name: 'Allow' }).click();
  await expect(card).toHaveAttribute('data-tool-status', 'done');
  await expect(page.getByRole('status')).toContainText('Idle');
  const reply = (await page.locator('[data-kind=assistant]').last().textContent())?.trim() ?? '';
  expect(reply).not.toBe('');

  // Live: the replay has what was recorded so far.
  await page.getByRole('link', { name: 'Replay' }).click();
  await expect(page).toHaveURL(/#\/session\/[^/]+\/replay$/);
  const bar = page.getByRole('toolbar', { name: 'Replay' });
  await expect(bar.getByRole('status')).toContainText('Live session');
  const slider = bar.getByRole('slider', { name: 'Replay position' });
  await expect.poll(async () => Number(await slider.getAttribute('max'))).toBeGreaterThan(0);

  // The session ends; Reload takes in the rest.
  expect((await page.request.delete(`${duet.baseURL}/api/sessions/${id}`)).ok()).toBe(true);
  await bar.getByRole('button', { name: 'Reload' }).click();
  await expect(bar.getByRole('status')).toContainText('Ended session');

  const events = await timedEvents(page, duet, id);
  expect(events.every((e) => typeof e.at === 'number')).toBe(true);
  const asked = events.find((e) => e.event.type === 'control_request')?.at ?? NaN;
  const decided = events.find((e) => e.event.type === 'control_response')?.at ?? NaN;
  expect(decided).toBeGreaterThan(asked);

  // Between the request and the decision.
  await slider.fill(String((asked + decided) / 2000));
  const log = page.locator('.replay-chat .chat-log');
  await expect(log.locator('[data-kind=user]')).toContainText('run echo replayed-output');
  const replayCard = log.locator('[data-kind=tool]').last();
  await expect(replayCard.locator('.approval')).toHaveAttribute('data-approval-state', 'pending');
  await expect(replayCard.locator('.approval-done')).toHaveCount(0);
  await expect(log.getByText(reply, { exact: true })).toHaveCount(0);
  await expect.poll(() => replayText(page)).toMatch(/\[y\] yes/);
  expect(await replayText(page)).not.toMatch(/allowed/);

  // The end: decided, the reply, the exit.
  await slider.focus();
  await page.keyboard.press('End');
  await expect(replayCard.locator('.approval-done')).toContainText('Allowed');
  await expect(log.locator('[data-kind=assistant]').last()).toHaveText(reply);
  await expect(log.locator('[data-kind=exit]')).toBeVisible();
  await expect.poll(() => replayText(page)).toMatch(/allowed[\s\S]*replayed-output/);

  // Back to the start: the terminal is reset, not drawn over.
  await page.keyboard.press('Home');
  await expect(log.locator('[data-kind]')).toHaveCount(0);
  expect((await replayText(page)).trim()).toBe('');

  // Play at 8×: the position moves on; Space pauses; arrows step.
  await bar.getByRole('combobox', { name: 'Speed' }).selectOption('8');
  await bar.getByRole('button', { name: 'Play' }).click();
  await expect.poll(() => position(page)).toBeGreaterThan(0.5);
  await slider.focus();
  await page.keyboard.press(' ');
  await expect(bar.getByRole('button', { name: 'Play' })).toBeVisible();
  const paused = await position(page);
  await page.keyboard.press('ArrowLeft');
  expect(await position(page)).toBeCloseTo(Math.max(0, paused - 1), 5);
  await page.keyboard.press('ArrowRight');
  expect(await position(page)).toBeCloseTo(Math.max(0, paused - 1) + 1, 5);

  // Back to the live view.
  await bar.getByRole('link', { name: 'Live' }).click();
  await expect(page).toHaveURL(new RegExp(`#/session/${id}$`));
});

test('replay fits a phone', async ({ loggedIn: page }) => {
  const id = await startSession(page, 'demo');
  await page.setViewportSize({ width: 390, height: 844 });
  await sendChat(page, 'hello replay');
  await expect(page.locator('[data-kind=assistant]').last()).toContainText('hello replay');
  // No room in the top bar: the replay is in the Export menu.
  await expect(page.getByRole('link', { name: 'Replay', exact: true })).toBeHidden();
  await page.locator('.export-menu > summary').click();
  await page.getByRole('menuitem', { name: 'Replay in the browser' }).click();
  await expect(page).toHaveURL(new RegExp(`#/session/${id}/replay$`));
  const bar = page.getByRole('toolbar', { name: 'Replay' });
  await expect(bar.getByRole('button', { name: 'Play' })).toBeVisible();
  await expect(bar.getByRole('slider', { name: 'Replay position' })).toBeVisible();
  await bar.getByRole('slider', { name: 'Replay position' }).press('End');
  await expect(page.locator('.replay-chat [data-kind=assistant]').last()).toContainText('hello replay');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});
