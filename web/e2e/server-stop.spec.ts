// duet itself stops (SIGTERM, as `systemctl stop` or Ctrl-C sends): the tab
// says the server stopped, not that the agent crashed (exit 143, SIGTERM),
// and it comes back with the server, the session ended and resumable.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, sendChat, startDuet, startSession, stopDuet, test, waitGreeted, webRoot } from './fixtures';

test('a stopped server is reported as such, and its session comes back resumable', async ({ browser }) => {
  test.setTimeout(90_000);
  // A resumable profile: the scripted stream-json agent of the server's tests.
  const script = resolve(webRoot, '../server/tests/fixtures/fake_stream_json.py');
  const configDir = mkdtempSync(join(tmpdir(), 'duet-e2e-config-'));
  const config = join(configDir, 'duet.toml');
  writeFileSync(config, `[[profile]]\nname = "fake"\ncommand = "python3"\nargs = [${JSON.stringify(script)}]\nchannel = "stream_json"\nresume_args = [${JSON.stringify(script)}, "--resume", "{agent_session_id}"]\n`);
  const first = await startDuet(['--config', config]);
  let second: Awaited<ReturnType<typeof startDuet>> | undefined;
  try {
    const page = await browser.newPage();
    await page.goto(`${first.duet.baseURL}/?token=${first.duet.token}`);
    await startSession(page, 'fake');
    await sendChat(page, 'hello before the stop');
    await expect(page.locator('.chat-log .msg.assistant').last()).toContainText('Echo: hello before the stop');

    const exited = new Promise((ok) => first.proc.once('exit', ok));
    first.proc.kill('SIGTERM');
    await exited;
    const said = 'The program ended when the server stopped.';
    await expect(page.locator('.chat-log [data-kind=exit]')).toHaveText(said);
    await expect(page.locator('.term-banner .term-banner-text')).toHaveText(said);
    // Amber, not the red of a failed program: nothing went wrong with the agent.
    await expect(page.locator('.chat-log [data-kind=exit]')).toHaveClass(/\bis-stopped\b/);
    await expect(page.locator('.term-banner')).toHaveAttribute('data-tone', 'stopped');
    await expect(page.locator('.chat-status')).toContainText('Ended (server stopped)');
    await expect(page.locator('.banner')).toContainText('The server stopped');

    // Back on the same address: the tab reconnects by itself.
    second = await startDuet(['--config', config], first.duet);
    await waitGreeted(page);
    await expect(page.locator('.banner')).toBeHidden();
    await expect(page.locator('.chat-log [data-kind=exit]')).toHaveText(said);
    await expect(page.locator('.chat-status').getByRole('button', { name: 'Resume' })).toBeVisible();
    // A fresh tab hears the same from the restarted server.
    await page.reload();
    await waitGreeted(page);
    await expect(page.locator('.chat-log [data-kind=exit]')).toHaveText(said);
    await page.close();
  } finally {
    if (second) await stopDuet(second.proc, second.duet.stateDir);
    else await stopDuet(first.proc, first.duet.stateDir);
    rmSync(configDir, { recursive: true, force: true });
  }
});
