// Once a session was resumed, it leads to the copy instead of offering
// Resume again (which answered, in red text that stayed, that a resumed
// copy was already running): in its chat header, over its terminal and in
// the sidebar; and still after the copy ended and the server restarted.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, hideSidebar, openId, sendChat, showSidebar, SIZE_NAMES, SIZES, startDuet, stopDuet, test, waitGreeted, webRoot, type Duet } from './fixtures';

/** A resumable profile: the scripted stream-json agent of the server's tests. */
function config(dir: string): string {
  const script = resolve(webRoot, '../server/tests/fixtures/fake_stream_json.py');
  const file = join(dir, 'duet.toml');
  writeFileSync(file, `[[profile]]\nname = "fake"\ncommand = "python3"\nargs = [${JSON.stringify(script)}]\nchannel = "stream_json"\nresume_args = [${JSON.stringify(script)}, "--resume", "{agent_session_id}"]\n`);
  return file;
}

async function expectLeadsTo(page: Page, from: string, to: string): Promise<void> {
  const header = page.locator('.chat-status');
  await expect(header.getByRole('link', { name: 'Open resumed session' })).toHaveAttribute('href', `#/session/${to}`);
  await expect(header.getByRole('button', { name: 'Resume' })).toBeHidden();
  await expect(page.locator('.term-banner').getByRole('link', { name: 'Open resumed session' })).toBeVisible();
  await showSidebar(page);
  const row = page.locator(`.session-row[data-session-id="${from}"]`);
  await expect(row.getByRole('link', { name: 'Open resumed session' })).toBeVisible();
  await expect(row.getByRole('button', { name: 'Resume' })).toBeHidden();
  await expect(page.locator('.resume-error:visible')).toHaveCount(0);
  await hideSidebar(page);
}

for (const size of SIZE_NAMES) {
  test(`a resumed session leads to its copy, also after the copy ended and the server restarted (${size})`, async ({ browser }) => {
    test.setTimeout(150_000);
    const dir = mkdtempSync(join(tmpdir(), 'duet-e2e-resume-'));
    const file = config(dir);
    const first = await startDuet(['--config', file]);
    let second: Awaited<ReturnType<typeof startDuet>> | undefined;
    const duet: Duet = first.duet;
    const ctx = await browser.newContext({ ...SIZES[size] });
    try {
      const page = await ctx.newPage();
      await page.goto(`${duet.baseURL}/?token=${duet.token}`);
      const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile: 'fake' } });
      const old = ((await res.json()) as { id: string }).id;
      await openId(page, duet, old);
      await sendChat(page, 'hello before the end');
      await expect(page.locator('.chat-log .msg.assistant').last()).toContainText('Echo: hello before the end');
      expect((await page.request.delete(`${duet.baseURL}/api/sessions/${old}`)).ok()).toBe(true);

      await page.locator('.chat-status').getByRole('button', { name: 'Resume' }).click();
      await expect(page).not.toHaveURL(new RegExp(old));
      const copy = decodeURIComponent(new URL(page.url()).hash.replace('#/session/', ''));
      await waitGreeted(page);

      // Back at the old one: it leads to the copy.
      await openId(page, duet, old);
      await expectLeadsTo(page, old, copy);
      await page.locator('.chat-status').getByRole('link', { name: 'Open resumed session' }).click();
      await expect(page).toHaveURL(new RegExp(`#/session/${copy}$`));
      await waitGreeted(page);

      // The copy ends, the server restarts: still so, and no red text.
      expect((await page.request.delete(`${duet.baseURL}/api/sessions/${copy}`)).ok()).toBe(true);
      const exited = new Promise((ok) => first.proc.once('exit', ok));
      first.proc.kill('SIGTERM');
      await exited;
      second = await startDuet(['--config', file], duet);
      await openId(page, duet, old);
      await expectLeadsTo(page, old, copy);
    } finally {
      await ctx.close();
      if (second) await stopDuet(second.proc, second.duet.stateDir);
      else await stopDuet(first.proc, first.duet.stateDir);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
