// The status follows the agent's real state: "Starting" until its
// handshake (it said Idle while Qwen Code was still starting and its
// terminal was blank), and "Reconnecting" while the server is out of reach
// (the sidebar still said "running · 1 connected").
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, openId, showSidebar, SIZE_NAMES, SIZES, startDuet, stopDuet, test } from './fixtures';

for (const size of SIZE_NAMES) {
  test(`Starting until the handshake, Reconnecting during an outage (${size})`, async ({ browser }) => {
    test.setTimeout(120_000);
    const dir = mkdtempSync(join(tmpdir(), 'duet-e2e-status-'));
    const gate = join(dir, 'go');
    // The demo agent, held back until the test opens the gate: a slow start, on cue.
    const config = join(dir, 'duet.toml');
    writeFileSync(config, `[[profile]]\nname = "slow"\ncommand = "sh"\nargs = ["-c", "while [ ! -e \\"$1\\" ]; do sleep 0.05; done; exec \\"$0\\" demo-agent --json-file \\"$2\\" --input-file \\"$3\\"", "{duet}", ${JSON.stringify(gate)}, "{events_file}", "{input_file}"]\n`);
    const first = await startDuet(['--config', config]);
    const { duet } = first;
    const ctx = await browser.newContext({ ...SIZES[size] });
    let proc = first.proc;
    try {
      const page = await ctx.newPage();
      await page.goto(`${duet.baseURL}/?token=${duet.token}`);
      const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile: 'slow' } });
      const id = ((await res.json()) as { id: string }).id;
      await openId(page, duet, id);
      const status = page.locator('.chat-status');
      await expect(status).toHaveAttribute('data-status', 'starting');
      await expect(status).toContainText('Starting…');
      await page.goto(`${duet.baseURL}/#/board`);
      await expect(page.locator(`.board-card[data-session-id="${id}"] .badge`)).toHaveText('starting');

      writeFileSync(gate, '');
      expect(existsSync(gate)).toBe(true);
      await expect(page.locator(`.board-card[data-session-id="${id}"] .badge`)).toHaveText('idle');
      await openId(page, duet, id);
      await expect(status).toHaveAttribute('data-status', 'idle');
      await expect(status).toContainText('Idle');

      // The server goes away (killed: nothing is said first).
      const gone = new Promise((ok) => first.proc.once('exit', ok));
      first.proc.kill('SIGKILL');
      await gone;
      await expect(status).toHaveAttribute('data-status', 'reconnecting');
      await expect(status).toContainText('Reconnecting…');
      await showSidebar(page);
      const meta = page.locator(`.session-row[data-session-id="${id}"] .session-meta`).last();
      await expect(meta).toContainText('reconnecting…');
      await expect(meta).not.toContainText('connected');

      // Back: the session is there again (ended, as the killed server left it), and so is the list.
      proc = (await startDuet(['--config', config], duet)).proc;
      await expect(meta).not.toContainText('reconnecting');
      await expect(status).not.toHaveAttribute('data-status', 'reconnecting');
    } finally {
      await ctx.close();
      await stopDuet(proc, duet.stateDir);
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
