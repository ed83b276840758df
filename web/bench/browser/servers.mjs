// The servers a browser benchmark drives: a real `duet serve` and ttyd, each
// on 127.0.0.1 port 0, killed with the run. Shared by chat-bench.mjs and
// browser-bench.mjs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const webRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The duet binary: $DUET_BIN (relative to web/), else the debug build. */
export function duetBin(dflt = '../target/debug/duet') {
  return resolve(webRoot, process.env.DUET_BIN ?? dflt);
}

/** ttyd built by bench/build-ttyd.sh, or $TTYD. */
export function ttydBin() {
  return process.env.TTYD ?? resolve(webRoot, '../.cache/ttyd/bin/ttyd');
}

/** Waits for the first line of `stream` that `re` matches; its first group. */
function announced(proc, stream, re, what) {
  return new Promise((ok, fail) => {
    const lines = createInterface({ input: stream });
    lines.on('line', (line) => {
      const m = re.exec(line);
      if (m) ok(m[1]);
    });
    proc.on('exit', (code) => { fail(new Error(`${what} exited (${code}) before it was ready`)); });
  });
}

/** Starts `duet serve` with `config`; its URL once it says it is ready. */
export async function startDuet({ bin, config, stateDir, token }) {
  if (!existsSync(bin)) throw new Error(`no duet binary at ${bin}`);
  const proc = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--token', token, '--state-dir', stateDir, '--config', config], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, RUST_LOG: 'warn' } });
  const port = await announced(proc, proc.stdout, /http:\/\/127\.0\.0\.1:(\d+)\//, 'duet');
  return { proc, url: `http://127.0.0.1:${port}` };
}

/**
 * Starts ttyd serving `argv` (one program per connection, as ttyd does).
 * `-W`: clients may type; `-t rendererType=dom`: the renderer duet uses
 * without a hardware GPU (see the "In the browser" section of
 * docs/benchmarks.md), unless `renderer` says otherwise.
 */
export async function startTtyd({ bin = ttydBin(), argv, renderer = 'dom' }) {
  if (!existsSync(bin)) throw new Error(`no ttyd at ${bin}: run bench/build-ttyd.sh (or set $TTYD)`);
  const args = ['-p', '0', '-i', '127.0.0.1', '-W', '-P', '3600', '-t', 'disableLeaveAlert=true', '-t', 'disableResizeOverlay=true'];
  if (renderer) args.push('-t', `rendererType=${renderer}`);
  const proc = spawn(bin, [...args, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await announced(proc, proc.stderr, /Listening on port: (\d+)/, 'ttyd');
  return { proc, url: `http://127.0.0.1:${port}` };
}

/** A `[[profile]]` table for duet's config. */
export function profile(name, command, args, extra = '') {
  return `[[profile]]\nname = ${JSON.stringify(name)}\ncommand = ${JSON.stringify(command)}\nargs = [${args.map((a) => JSON.stringify(a)).join(', ')}]\n${extra}\n`;
}
