// Each role sees only the controls it can use. A named driver token may
// type and send prompts, but not start, rename, end, delete or resume
// sessions (the server answers 403): none of those is shown. (A viewer's
// terminal controls are in terminal-follow.spec.ts.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, showSidebar, SIZE_NAMES, SIZES, startDuet, stopDuet, test, waitGreeted, webRoot } from './fixtures';

/** A driver token and the config that knows it. */
function driverConfig(dir: string): { token: string; config: string } {
  const bin = resolve(webRoot, process.env.DUET_BIN ?? '../target/debug/duet');
  const out = execFileSync(bin, ['token', '--name', 'drv', '--role', 'driver'], { encoding: 'utf8' });
  const token = /token \(shown once[^:]*\): (\S+)/.exec(out)?.[1] ?? '';
  const snippet = out.slice(out.indexOf('[[token]]'));
  const config = join(dir, 'duet.toml');
  // The demo agent, as the built-in profile runs it.
  writeFileSync(config, `[[profile]]\nname = "demo"\ncommand = "{duet}"\nargs = ["demo-agent", "--json-file", "{events_file}", "--input-file", "{input_file}"]\n\n${snippet}`);
  return { token, config };
}

for (const size of SIZE_NAMES) {
  test(`a driver is shown no start, rename, end, delete or resume (${size})`, async ({ browser }) => {
    test.setTimeout(90_000);
    const dir = mkdtempSync(join(tmpdir(), 'duet-e2e-roles-'));
    const { token, config } = driverConfig(dir);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const { duet, proc } = await startDuet(['--config', config]);
    const ctx = await browser.newContext({ ...SIZES[size] });
    try {
      // The owner starts two sessions and ends one.
      const owner = { Authorization: `Bearer ${duet.token}` };
      const create = async (): Promise<string> => ((await (await ctx.request.post(`${duet.baseURL}/api/sessions`, { headers: owner, data: { profile: 'demo' } })).json()) as { id: string }).id;
      const running = await create();
      const ended = await create();
      expect((await ctx.request.delete(`${duet.baseURL}/api/sessions/${ended}`, { headers: owner })).ok()).toBe(true);

      const page = await ctx.newPage();
      await page.goto(`${duet.baseURL}/?token=${token}`);
      await page.goto(`${duet.baseURL}/#/session/${running}`);
      await waitGreeted(page);
      // It drives: the message box is there.
      await expect(page.getByRole('textbox', { name: 'Message' })).toBeVisible();
      await showSidebar(page);
      const sidebar = page.getByRole('navigation', { name: 'Sessions' });
      await expect(sidebar.locator(`.session-row[data-session-id="${running}"]`)).toBeVisible();
      await expect(sidebar.getByRole('button', { name: /^Start/ })).toBeHidden();
      await expect(sidebar.getByRole('button', { name: /^Rename session/ })).toHaveCount(0);
      await expect(sidebar.getByRole('button', { name: /^End session/ })).toHaveCount(0);
      await sidebar.locator('.ended summary').click();
      await expect(sidebar.locator(`.session-row[data-session-id="${ended}"]`)).toBeVisible();
      await expect(sidebar.getByRole('button', { name: /^Delete the transcript/ })).toHaveCount(0);
      await page.goto(`${duet.baseURL}/#/board`);
      await expect(page.locator('.board-card')).toHaveCount(2);
      await expect(page.locator('.board-rename:visible')).toHaveCount(0);
    } finally {
      await ctx.close();
      await stopDuet(proc, duet.stateDir);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
