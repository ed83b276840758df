// A headless agent (channel `stream_json`: the agent runs on pipes, no PTY)
// takes no keystrokes: the page sends none and says why, while the terminal
// pane still shows what the server writes there (a line per prompt, stderr).
// The agent is the scripted fixture the server's tests use.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, expectTerminal, screenshotDir, sendChat, startDuet, startSession, stopDuet, test } from './fixtures';

const fixture = resolve(dirname(fileURLToPath(import.meta.url)), '../../server/tests/fixtures/fake_stream_json.py');

test('a headless agent gets no keystrokes; its pane shows a read-only note and its output', async ({ page }) => {
  test.setTimeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'duet-headless-'));
  const config = join(dir, 'duet.toml');
  writeFileSync(config, `default_profile = "headless"\n\n[[profile]]\nname = "headless"\ncommand = "python3"\nargs = [${JSON.stringify(fixture)}]\nchannel = "stream_json"\n`);
  const { duet, proc } = await startDuet(['--config', config]);
  try {
    // Every binary frame the page sends is a keystroke for the PTY.
    let binarySent = 0;
    const errors: string[] = [];
    page.on('websocket', (ws) => {
      ws.on('framesent', (f) => { if (typeof f.payload !== 'string') binarySent++; });
      ws.on('framereceived', (f) => { if (typeof f.payload === 'string' && f.payload.includes('"type":"error"')) errors.push(f.payload); });
    });
    await page.goto(`${duet.baseURL}/?token=${duet.token}`);
    await expect(page.locator('.topbar')).toBeVisible();
    await startSession(page, 'headless');
    await page.getByRole('button', { name: 'Split', exact: true }).click();
    const pane = page.locator('.terminal-pane');
    await expect(pane).toHaveAttribute('data-headless', 'true');
    const note = pane.locator('.keys-note');
    // Said before anyone types, and again when they do.
    await expect(note).toBeVisible();
    await expect(note).toContainText('runs without a terminal');
    await page.locator('.terminal-pane .xterm').click();
    await page.keyboard.type('typed keys');
    await page.keyboard.press('Enter');
    await expect(note).toBeVisible();
    // The chat works, and the pane shows the server's line for the prompt.
    await sendChat(page, 'hello from the browser');
    await expect(page.locator('[data-kind=assistant]').last()).toContainText('Echo: hello from the browser');
    await expectTerminal(page, /hello from the browser/);
    // Its stderr shows in the pane; so does its death, and the exit status in both views.
    await expectTerminal(page, /fake agent starting/);
    await sendChat(page, 'die');
    await expectTerminal(page, /fatal: the model went away/);
    await expect(page.locator('.chat-log [data-kind=exit]')).toContainText('exited with code 3');
    await expect(pane.locator('.term-banner[data-success=false]')).toContainText('exited with code 3');
    await page.screenshot({ path: join(screenshotDir, 'headless-read-only.png') });
    expect(binarySent).toBe(0);
    expect(errors).toEqual([]);
  } finally {
    await stopDuet(proc, duet.stateDir);
    rmSync(dir, { recursive: true, force: true });
  }
});
