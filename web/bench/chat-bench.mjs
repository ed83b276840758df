// Chat benchmark in a real browser (not a timed test; figures go to
// docs/benchmarks.md). A real `duet serve` runs a stand-in agent
// (replay_agent.py) that writes a long recorded history at once: the Qwen Code
// 0.15.10 fixture repeated with fresh ids, 5,000+ events. We measure
//   1. load: from navigation to the whole history reduced and drawn;
//   2. streaming: Chromium's own CPU accounting (CDP Performance metrics:
//      script, layout, style) per streamed token, after a short history and
//      after the long one. O(1) per token means the two agree.
// Usage (from web/, after `npm run build` and `cargo build`):
//   node bench/chat-bench.mjs [--reps 60] [--tokens 1500] [--delay-ms 5] [--loads 5] [--profile 1]
// --profile 1 also records one load of each history with the CDP profiler and
// prints where the time went (self time by function; build with
// `npx vite build --minify false` and the server for readable names).
import { chromium } from '@playwright/test';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonLines, repeatWithFreshIds } from './browser/history.mjs';
import { chatEntries } from './browser/probes.mjs';
import { duetBin, startDuet } from './browser/servers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const webRoot = resolve(here, '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const REPS = arg('reps', 60);
const TOKENS = arg('tokens', 1500);
const DELAY_MS = arg('delay-ms', 5);
const LOADS = arg('loads', 5);
const PROFILE = arg('profile', 0) > 0;
const fixtures = process.env.DUET_FIXTURES ?? resolve(webRoot, '../protocol/tests/fixtures');
const fixture = join(fixtures, 'qwen-code-0.15.10/events.jsonl');
const bin = duetBin();

/** The fixture `reps` times, each copy with its own ids (so nothing dedupes). */
function history(reps) {
  return repeatWithFreshIds(jsonLines(fixture), reps);
}

/** A streamed reply of `n` tokens, its final message and the turn's end. */
function reply(n) {
  const ev = (event) => JSON.stringify({ type: 'stream_event', uuid: randomBytes(8).toString('hex'), session_id: 'bench', event });
  const words = Array.from({ length: n }, (_, i) => `word${i % 100} `);
  return [
    ev({ type: 'message_start', message: { id: 'bench-reply', role: 'assistant', content: [] } }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...words.map((w) => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } })),
    ev({ type: 'content_block_stop', index: 0 }),
    JSON.stringify({ type: 'assistant', uuid: 'bench-reply', session_id: 'bench', message: { id: 'bench-reply', role: 'assistant', content: [{ type: 'text', text: words.join('') }] } }),
    ev({ type: 'message_stop' }),
  ];
}

/** Self time by function in a CDP CPU profile, the largest first. */
function selfTimes(profile, top = 20) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, ms]) => `${ms.toFixed(1).padStart(8)} ms  ${k}`);
}

/** Loads `id` in a new page and waits until `want` events are reduced and drawn; ms since navigation. */
async function load(ctx, url, id, want) {
  const p = await ctx.newPage();
  await p.goto(`${url}/#/session/${encodeURIComponent(id)}`);
  const t = await p.evaluate(async (n) => {
    for (;;) {
      if ((window.duet?.state()?.lastSeq ?? 0) >= n) break;
      await new Promise((r) => requestAnimationFrame(r));
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return { ms: performance.now() };
  }, want);
  // The log's length (its entries near the view are the ones drawn).
  return { page: p, ...t, items: (await p.evaluate(chatEntries)).total };
}

const log = (...a) => { if (process.env.BENCH_DEBUG) console.error(...a); };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'duet-chat-bench-'));
  const sizes = { short: 1, long: REPS };
  const profiles = [];
  const counts = {};
  writeFileSync(join(dir, 'tail.jsonl'), reply(TOKENS).join('\n') + '\n');
  for (const [name, reps] of Object.entries(sizes)) {
    const lines = history(reps);
    counts[name] = lines.length;
    writeFileSync(join(dir, `${name}.jsonl`), lines.join('\n') + '\n');
    profiles.push(`[[profile]]\nname = "${name}"\ncommand = "python3"\nargs = [${JSON.stringify(join(here, 'replay_agent.py'))}, ${JSON.stringify(join(dir, `${name}.jsonl`))}, ${JSON.stringify(join(dir, 'tail.jsonl'))}, ${JSON.stringify(join(dir, `${name}.go`))}, "{events_file}", "${DELAY_MS / 1000}"]\n`);
  }
  writeFileSync(join(dir, 'duet.toml'), profiles.join('\n'));
  const token = randomBytes(16).toString('hex');
  const { proc, url } = await startDuet({ bin, config: join(dir, 'duet.toml'), stateDir: join(dir, 'state'), token });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const results = {};
  try {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${url}/?token=${token}`);
    log("logged in");
    for (const name of Object.keys(sizes)) {
      const n = counts[name];
      const res = await page.request.post(`${url}/api/sessions`, { data: { profile: name } });
      const { id } = await res.json();
      log(name, "created", res.status(), id);
      for (;;) {
        const info = await (await page.request.get(`${url}/api/sessions/${id}`)).json();
        if (info.last_seq >= n) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      log(name, "history written");
      // 1. Load: navigation to the whole history reduced and drawn (two frames after the last event).
      const loads = [];
      let items = 0;
      for (let i = 0; i < LOADS; i++) {
        const t = await load(ctx, url, id, n);
        loads.push(t.ms);
        items = t.items;
        await t.page.close();
      }
      log(name, "loads", loads);
      let profile;
      if (PROFILE) {
        // One more load under the profiler, with Chromium's own accounting of it.
        const blank = await ctx.newPage();
        const cdp = await ctx.newCDPSession(blank);
        await cdp.send('Performance.enable');
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
        await cdp.send('Profiler.start');
        await blank.goto(`${url}/#/session/${encodeURIComponent(id)}`);
        await blank.waitForFunction((want) => (window.duet?.state()?.lastSeq ?? 0) >= want, n, { timeout: 120_000, polling: 'raf' });
        await blank.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const { profile: prof } = await cdp.send('Profiler.stop');
        const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
        const ms = (k) => Math.round(m[k] * 1000);
        profile = { scriptMs: ms('ScriptDuration'), layoutMs: ms('LayoutDuration'), styleMs: ms('RecalcStyleDuration'), taskMs: ms('TaskDuration'), layouts: m.LayoutCount, styles: m.RecalcStyleCount, selfTime: selfTimes(prof) };
        await blank.close();
      }
      // 2. Streaming, in a page that has the history drawn.
      const p = await ctx.newPage();
      await p.goto(`${url}/#/session/${encodeURIComponent(id)}`);
      await p.waitForFunction((want) => (window.duet?.state()?.lastSeq ?? 0) >= want, n, { timeout: 120_000 });
      const cdp = await ctx.newCDPSession(p);
      await cdp.send('Performance.enable');
      const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
      const before = await metrics();
      const t0 = Date.now();
      writeFileSync(join(dir, `${name}.go`), '');
      const end = n + TOKENS + 5;
      await p.waitForFunction((want) => (window.duet?.state()?.lastSeq ?? 0) >= want, end, { timeout: 600_000, polling: 50 });
      await p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const wall = Date.now() - t0;
      const after = await metrics();
      const per = (k) => ((after[k] - before[k]) * 1e6) / TOKENS; // seconds → µs per token
      results[name] = {
        events: n,
        items,
        loadMedianMs: Math.round(median(loads)),
        loadsMs: loads.map(Math.round),
        ...(profile ? { loadProfile: profile } : {}),
        streamWallMs: wall,
        perTokenUs: { script: per('ScriptDuration').toFixed(1), layout: per('LayoutDuration').toFixed(1), style: per('RecalcStyleDuration').toFixed(1), task: per('TaskDuration').toFixed(1) },
      };
      await p.close();
      await page.request.delete(`${url}/api/sessions/${id}`);
    }
  } finally {
    await browser.close();
    proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ tokens: TOKENS, delayMs: DELAY_MS, results }, null, 2));
}

await main();
