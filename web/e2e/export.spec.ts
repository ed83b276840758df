// Export from the UI: the events as the server keeps them (verbatim NDJSON),
// the chat as Markdown, the terminal as an asciicast.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, sendChat, startSession, test } from './fixtures';

async function download(page: Page, item: string): Promise<{ name: string; text: string }> {
  await page.locator('.export-menu > summary').click();
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: item }).click()]);
  const path = await d.path();
  return { name: d.suggestedFilename(), text: readFileSync(path, 'utf8') };
}

// Each download opens the menu afresh: choosing an item closes it. (The
// spec was fixme'd as "no download for the Events link"; what timed out was
// the next item: the menu stayed open after a link, so the next summary
// click closed it and the item was never visible.)
test('events, chat and recording export from the top bar', async ({ loggedIn: page, duet }) => {
  await expect(page.locator('.export-menu')).toBeHidden();
  const id = await startSession(page, 'demo');
  await sendChat(page, 'hello export');
  await expect(page.locator('[data-kind=assistant]').last()).toContainText('hello export');
  const reply = (await page.locator('[data-kind=assistant]').last().textContent())?.trim() ?? '';

  await expect(page.getByRole('status')).toContainText('Idle');
  const served = await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/events`)).text();
  const events = await download(page, 'Events (NDJSON)');
  expect(events.name).toBe(`duet-${id}.ndjson`);
  expect(events.text).toBe(served);
  // Verbatim: the agent's own events file, byte for byte (no receive times in it).
  expect(events.text).toBe(readFileSync(join(duet.stateDir, id, 'events.jsonl'), 'utf8'));
  expect(events.text.split('\n').filter((l) => l !== '').every((l) => typeof JSON.parse(l) === 'object')).toBe(true);

  const chat = await download(page, 'Chat (Markdown)');
  expect(chat.name).toBe(`duet-${id}.md`);
  // Named by its first prompt (the server's prompt_name), then its profile.
  expect(chat.text).toMatch(/^# hello export · demo · /);
  expect(chat.text).toContain('## You\n\nhello export');
  expect(chat.text).toContain(`## Agent\n\n${reply}`);

  const cast = await download(page, 'Terminal recording (.cast)');
  expect(cast.name).toBe(`duet-${id}.cast`);
  const [header, ...lines] = cast.text.trim().split('\n');
  expect((JSON.parse(header ?? '{}') as { version: number }).version).toBe(2);
  expect(lines.some((l) => (JSON.parse(l) as unknown[])[1] === 'o')).toBe(true);
});
