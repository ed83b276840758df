// A duet killed (SIGKILL) in the middle of a turn and started again over its
// state dir: the session is recovered, ended. A tool call that never got its
// result says it did not finish (it said "running" forever); a prompt the
// server held while the agent was busy is shown, text and all, as not
// delivered (it was lost), and the session that resumes the conversation
// offers it, to send or dismiss.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, sendChat, startDuet, startSession, stopDuet, test, webRoot } from './fixtures';

test('after a crash mid-turn, the tool did not finish and the held prompt is kept and offered on resume', async ({ browser }) => {
  const script = resolve(webRoot, '../server/tests/fixtures/fake_tui.py');
  const configDir = mkdtempSync(join(tmpdir(), 'duet-e2e-config-'));
  const config = join(configDir, 'duet.toml');
  // The fake TUI, resumable: its handshake names its conversation.
  const args = JSON.stringify([script, '--json-file', '{events_file}', '--input-file', '{input_file}']);
  writeFileSync(config, `[[profile]]\nname = "fake"\ncommand = "python3"\nargs = ${args}\nresume_args = ${args}\n`);
  const first = await startDuet(['--config', config]);
  let second: Awaited<ReturnType<typeof startDuet>> | undefined;
  try {
    const page = await browser.newPage();
    await page.goto(`${first.duet.baseURL}/?token=${first.duet.token}`);
    const id = await startSession(page, 'fake');
    await sendChat(page, 'run sleep 600');
    const tool = page.locator('.chat-log .tool');
    await expect(tool).toHaveAttribute('data-tool-status', 'running');
    // The agent is busy: the server holds the next prompt.
    await sendChat(page, 'held one');
    const queued = page.locator('.chat-log .msg.pending[data-pending-state="queued"]');
    await expect(queued).toContainText('held one');

    const killed = new Promise((ok) => first.proc.once('exit', ok));
    first.proc.kill('SIGKILL');
    await killed;
    second = await startDuet(['--config', config], first.duet);
    await page.goto(`${second.duet.baseURL}/?token=${second.duet.token}`);
    await page.goto(`${second.duet.baseURL}/#/session/${encodeURIComponent(id)}`);

    await expect(page.locator('.chat-log .exit-note')).toBeVisible();
    await expect(tool).toHaveAttribute('data-tool-status', 'interrupted');
    await expect(tool.locator('.tool-head .badge')).toHaveText('did not finish');
    const unsent = page.locator('.chat-log .msg.pending[data-pending-state="unsent"]');
    await expect(unsent.locator('.bubble')).toHaveText('held one');
    await expect(unsent).toContainText('Not delivered: the program ended before it took this prompt.');
    await expect(unsent.getByRole('button', { name: 'Send it now' })).toHaveCount(0);

    await page.locator('.chat-status').getByRole('button', { name: 'Resume' }).click();
    await expect(page).not.toHaveURL(new RegExp(`#/session/${id}$`));
    // The earlier session's tool, above the new chat, did not finish either.
    await expect(tool).toHaveAttribute('data-tool-status', 'interrupted');
    await expect(unsent).toContainText('Not delivered: the earlier session ended before its agent took this prompt.');
    // Offered, not sent by itself (server/tests/held_prompts.rs checks that the agent gets nothing).
    await unsent.getByRole('button', { name: 'Send it now' }).click();
    await expect(page.locator('.chat-log .msg.assistant').last()).toContainText('you said held one');
    await expect(unsent).toHaveCount(0);
    // Let go of on the server too: a reload does not bring it back.
    await page.reload();
    await expect(page.locator('.chat-log .msg.assistant').last()).toContainText('you said held one');
    await expect(unsent).toHaveCount(0);
    await page.close();
  } finally {
    // The second runs over the first's state dir: one stop removes it.
    await (second ? stopDuet(second.proc, second.duet.stateDir) : stopDuet(first.proc, first.duet.stateDir));
    rmSync(configDir, { recursive: true, force: true });
  }
});
