// A duet killed (SIGKILL) in the middle of a turn and started again over its
// state dir: the session is recovered, ended. A tool call that never got its
// result says it did not finish (it said "running" forever).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, sendChat, startDuet, startSession, stopDuet, test, webRoot } from './fixtures';

test('after a crash mid-turn, the tool did not finish', async ({ browser }) => {
  const script = resolve(webRoot, '../server/tests/fixtures/fake_tui.py');
  const configDir = mkdtempSync(join(tmpdir(), 'duet-e2e-config-'));
  const config = join(configDir, 'duet.toml');
  const args = JSON.stringify([script, '--json-file', '{events_file}', '--input-file', '{input_file}']);
  writeFileSync(config, `[[profile]]\nname = "fake"\ncommand = "python3"\nargs = ${args}\n`);
  const first = await startDuet(['--config', config]);
  let second: Awaited<ReturnType<typeof startDuet>> | undefined;
  try {
    const page = await browser.newPage();
    await page.goto(`${first.duet.baseURL}/?token=${first.duet.token}`);
    const id = await startSession(page, 'fake');
    await sendChat(page, 'run sleep 600');
    const tool = page.locator('.chat-log .tool');
    await expect(tool).toHaveAttribute('data-tool-status', 'running');

    const killed = new Promise((ok) => first.proc.once('exit', ok));
    first.proc.kill('SIGKILL');
    await killed;
    second = await startDuet(['--config', config], first.duet);
    await page.goto(`${second.duet.baseURL}/?token=${second.duet.token}`);
    await page.goto(`${second.duet.baseURL}/#/session/${encodeURIComponent(id)}`);

    await expect(page.locator('.chat-log .exit-note')).toBeVisible();
    await expect(tool).toHaveAttribute('data-tool-status', 'interrupted');
    await expect(tool.locator('.tool-head .badge')).toHaveText('did not finish');
    await page.close();
  } finally {
    // The second runs over the first's state dir: one stop removes it.
    await (second ? stopDuet(second.proc, second.duet.stateDir) : stopDuet(first.proc, first.duet.stateDir));
    rmSync(configDir, { recursive: true, force: true });
  }
});
