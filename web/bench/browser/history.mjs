// Side-channel histories for the browser benchmarks: a recorded Qwen Code
// 0.15.10 conversation (from the repository's fixtures, so a bare clone runs
// the benchmark) repeated with fresh ids to any length, and the terminal
// output a long session leaves behind.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The recorded conversation: two prompts queued during a streamed reply, an approval and its answer (65 events). */
export const FIXTURE = resolve(repo, 'server/tests/fixtures/qwen-0.15.10/busy-submits/events.jsonl');

/** The non-empty lines of a JSON-lines file. */
export function jsonLines(path) {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '');
}

/** `lines` `reps` times, each copy with its own ids (so nothing dedupes). */
export function repeatWithFreshIds(lines, reps) {
  const out = [];
  for (let r = 0; r < reps; r++) {
    for (const l of lines) out.push(l.replace(/"(id|uuid|tool_use_id|request_id)":"([^"]+)"/g, (_, k, v) => `"${k}":"${v}-r${r}"`));
  }
  return out;
}

/**
 * At least `n` events of one conversation: one `session_start`, the
 * fixture's turns repeated (its own start and end left out), and a last
 * assistant message saying `last`, which a page shows once it has drawn
 * the whole history.
 */
export function conversation(n, last) {
  const all = jsonLines(FIXTURE);
  const start = all.find((l) => l.includes('"subtype":"session_start"'));
  const turns = all.filter((l) => !l.includes('"subtype":"session_start"') && !l.includes('"subtype":"session_end"'));
  const reps = Math.ceil((n - 2) / turns.length);
  const end = JSON.stringify({ type: 'assistant', uuid: 'bench-last', session_id: 'bench', message: { id: 'bench-last', type: 'message', role: 'assistant', content: [{ type: 'text', text: last }] } });
  return [start, ...repeatWithFreshIds(turns, reps), end];
}

/**
 * About `bytes` of terminal output like a long session's: numbered lines of
 * 20-140 columns, some coloured (16, 256 and truecolor SGR), some with
 * wide characters, then `marker` on a line of its own.
 */
export function terminalText(bytes, marker) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const width = 20 + ((i * 37) % 121);
    let line = `${String(i).padStart(7, '0')} `;
    if (i % 7 === 0) line += `\x1b[3${i % 8}mcolour\x1b[0m `;
    if (i % 11 === 0) line += `\x1b[38;5;${i % 256}mindexed\x1b[0m \x1b[38;2;${i % 256};128;64mtrue\x1b[0m `;
    if (i % 13 === 0) line += '全角の文字 ';
    while (line.length < width) line += 'lorem ipsum dolor sit amet '.slice(0, width - line.length);
    line += '\n';
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  parts.push(`${marker}\n`);
  return parts.join('');
}
