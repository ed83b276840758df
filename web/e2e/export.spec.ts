// Export from the UI: the events as the server keeps them (verbatim NDJSON),
// the chat as Markdown, the terminal as an asciicast.
import { readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { expect, sendChat, startSession, test } from './fixtures';

async function download(page: Page, item: string): Promise<{ name: string; text: string }> {
  await page.locator('.export-menu > summary').click();
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: item }).click()]);
  const path = await d.path();
  return { name: d.suggestedFilename(), text: readFileSync(path, 'utf8') };
}

// fixme: the Events link's download starts in a lone probe, but in this
// spec Chromium fires no download event for it (60 s timeout) in 4 runs of
// 5; not understood yet. The Markdown and .cast paths are not reached.
test.fixme('events, chat and recording export from the top bar', async ({ loggedIn: page, duet }) => {
  await expect(page.locator('.export-menu')).toBeHidden();
  const id = await startSession(page, 'demo');
  await sendChat(page, 'hello export');
  await expect(page.locator('[data-kind=assistant]').last()).toContainText('hello export');

  await expect(page.getByRole('status')).toContainText('Idle');
  const served = await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/events`)).text();
  const events = await download(page, 'Events (NDJSON)');
  expect(events.name).toBe(`duet-${id}.ndjson`);
  expect(events.text).toBe(served);
  expect(events.text.split('\n').filter((l) => l !== '').every((l) => typeof JSON.parse(l) === 'object')).toBe(true);

  const chat = await download(page, 'Chat (Markdown)');
  expect(chat.name).toBe(`duet-${id}.md`);
  expect(chat.text).toMatch(/^# demo · /);
  expect(chat.text).toContain('## You\n\nhello export');
  expect(chat.text).toContain('## Agent\n\n');

  const cast = await download(page, 'Terminal recording (.cast)');
  expect(cast.name).toBe(`duet-${id}.cast`);
  const [header, ...lines] = cast.text.trim().split('\n');
  expect((JSON.parse(header ?? '{}') as { version: number }).version).toBe(2);
  expect(lines.some((l) => (JSON.parse(l) as unknown[])[1] === 'o')).toBe(true);
});
