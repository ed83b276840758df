// Replays terminal output and resizes on xterm.js (@xterm/headless, the same
// version as the browser's @xterm/xterm) and reports what the terminal holds:
// the reference that `fuzz::xterm` compares duet's server screen with.
//
// Reads one case per line on stdin, a JSON object
//   {"cols": 80, "rows": 24, "scrollback": 100,
//    "steps": [{"out": "<base64 bytes>"}, {"resize": [cols, rows]}, ...]}
// and writes one JSON line per case: {"states": [state, ...]}, a state after
// every resize and one at the end, each
//   {"broken": bool, "cols", "rows", "cursor": [x, y], "alt": bool,
//    "screen": [[text, wrapped], ...], "scrollback": [[text, wrapped], ...]}
// where `wrapped` says the line continues the one above (xterm's isWrapped).
// One process serves every case of a test run.

import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

const web = new URL('../../../web/package.json', import.meta.url);
let Terminal;
let Unicode11Addon;
try {
  const require = createRequire(web);
  ({ Terminal } = require('@xterm/headless'));
  ({ Unicode11Addon } = require('@xterm/addon-unicode11'));
} catch (e) {
  process.stderr.write(`replay.mjs: cannot load @xterm/headless from web/node_modules (run npm ci in web/): ${e.message}\n`);
  process.exit(3);
}

// A line's text up to the terminal's width (the alternate buffer keeps
// cells past it after a narrowing), without trailing blanks.
function line(buf, y, cols) {
  const l = buf.getLine(y);
  return [l ? l.translateToString(true, 0, cols).trimEnd() : '', l ? l.isWrapped : false];
}

function state(term) {
  const buf = term.buffer.active;
  const screen = [];
  for (let y = 0; y < term.rows; y++) screen.push(line(buf, buf.baseY + y, term.cols));
  const scrollback = [];
  for (let y = 0; y < buf.baseY; y++) scrollback.push(line(buf, y, term.cols));
  return {
    // xterm lost track of its lines (fewer than the scrollback and screen
    // it counts; a narrowing of a full buffer without scrollback does it):
    // what it shows then is not its rules' outcome but stale memory.
    broken: buf.length !== buf.baseY + term.rows,
    cols: term.cols,
    rows: term.rows,
    cursor: [buf.cursorX, buf.cursorY],
    alt: buf.type === 'alternate',
    screen,
    scrollback,
  };
}

function write(term, bytes) {
  return new Promise((resolve) => { term.write(bytes, resolve); });
}

async function replay(c) {
  const term = new Terminal({ cols: c.cols, rows: c.rows, scrollback: c.scrollback, allowProposedApi: true });
  // The browser's terminal uses Unicode 11 widths (web/src/terminal/terminal.ts).
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  const states = [];
  for (const step of c.steps) {
    if (step.out !== undefined) {
      await write(term, Buffer.from(step.out, 'base64'));
    } else {
      term.resize(step.resize[0], step.resize[1]);
      states.push(state(term));
    }
  }
  states.push(state(term));
  term.dispose();
  return { states };
}

// xterm parses a write on a timer: what it throws there is uncaught, and
// fails the case being replayed.
let failCase = () => {};
process.on('uncaughtException', (e) => { failCase(e); });

function describe(e) {
  const stack = String((e && e.stack) || e).split('\n');
  return stack.map((l) => (l.length > 200 ? `${l.slice(0, 200)}…` : l)).slice(0, 8).join('\n');
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const text of lines) {
  if (!text.trim()) continue;
  let reply;
  try {
    reply = await new Promise((resolve, reject) => {
      failCase = reject;
      replay(JSON.parse(text)).then(resolve, reject);
    });
  } catch (e) {
    reply = { error: describe(e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
