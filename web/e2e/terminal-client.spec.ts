// Both surfaces at once (issue 29): `duet attach` in a terminal (a PTY that
// util-linux `script` holds) beside a browser tab. The tab lists it as
// "terminal on HOST"; what is typed in the terminal is the agent's own
// prompt, in the tab's chat; an approval answered in the tab shows in the
// terminal; after a detach it is gone from the list and the session runs on.
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { expect, startSession, test, webRoot } from './fixtures';

test('a terminal client is listed, and its prompts and the tab’s approvals reach both', async ({ loggedIn: page, duet }) => {
  const id = await startSession(page, 'demo');
  const bin = resolve(webRoot, process.env.DUET_BIN ?? '../target/debug/duet');
  let screen = '';
  const term = spawn('script', ['-qfec', `${bin} attach --server ${duet.baseURL} ${id}`, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, DUET_TOKEN: duet.token, TERM: 'xterm-256color' },
  });
  term.stdout.on('data', (d: Buffer) => { screen += d.toString(); });
  const exited = new Promise<number | null>((ok) => term.on('exit', ok));

  await expect(page.locator('.presence-item', { hasText: `terminal on ${hostname()}` })).toHaveCount(1);
  await expect.poll(() => screen).toContain('Type a message');
  term.stdin.write('hello from the terminal\r');
  await expect(page.locator('.chat-log [data-kind=user]', { hasText: 'hello from the terminal' })).toHaveCount(1);

  term.stdin.write('run ls\r');
  await expect.poll(() => screen).toContain('Allow run_shell_command');
  const card = page.locator('[data-kind=tool]').last();
  await card.getByRole('button', { name: 'Allow' }).click();
  await expect.poll(() => screen).toContain('allowed in the browser');

  term.stdin.write('\x1c\x1c');
  expect(await exited).toBe(0);
  expect(screen).toContain('detached');
  await expect(page.locator('.presence-item', { hasText: 'terminal on' })).toHaveCount(0);
});
