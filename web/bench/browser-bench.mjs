// duet's page against ttyd's page in Debian's Chromium, in one run (a script
// run by hand, not a timed test; figures and method: docs/benchmarks.md, "In
// the browser"). A real `duet serve` and a real ttyd (bench/build-ttyd.sh)
// serve the same programs on loopback:
//   --keys   keystroke → painted glyph, both pages running `cat`, interleaved
//   --open   navigation → a long session interactive (terminal history, chat
//            history, prompt box), with each page's floor beside it
//   --memory a tab's memory after a stream of side-channel events
//   --flood  the longest main-thread task while a flood is drawn, both pages
// (all four without a flag). Usage, from web/ after `npm run build` and
// `cargo build --release -p duet-server`:
//   node bench/browser-bench.mjs [--keys] [--open] [--memory] [--flood]
//     [--key-count 300] [--warm 20] [--block 25] [--gap-ms 40-120]
//     [--events 5000] [--history-mib 10] [--loads 5]
//     [--stream-events 10000] [--stream-delay-ms 1]
//     [--flood-mib 256] [--flood-rounds 2] [--json PATH]
// DUET_BIN (default ../target/release/duet), TTYD, CHROMIUM_PATH override
// the binaries. The table goes to stdout, progress to stderr.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLOOD_END, flood, floodArgv } from './browser/flood.mjs';
import { conversation, terminalText } from './browser/history.mjs';
import { keystrokes } from './browser/keys.mjs';
import { tabMemory } from './browser/memory.mjs';
import { HISTORY_END, HISTORY_LAST, READY, opening } from './browser/open.mjs';
import { duetContext, launch } from './browser/pages.mjs';
import { report } from './browser/report.mjs';
import { duetBin, profile, startDuet, startTtyd, ttydBin } from './browser/servers.mjs';
import { loadAverage, log } from './browser/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const num = (name, dflt) => Number(opt(name, dflt));
const chosen = ['keys', 'open', 'memory', 'flood'].filter(flag);
const workloads = chosen.length > 0 ? chosen : ['keys', 'open', 'memory', 'flood'];
const cfg = {
  keys: num('key-count', 300),
  warm: num('warm', 20),
  block: num('block', 25),
  gapMs: opt('gap-ms', '40-120').split('-').map(Number),
  events: num('events', 5000),
  historyBytes: num('history-mib', 10) * 1024 * 1024,
  loads: num('loads', 5),
  streamEvents: num('stream-events', 10000),
  streamDelayMs: num('stream-delay-ms', 1),
  floodBytes: num('flood-mib', 256) * 1024 * 1024,
  floodRounds: num('flood-rounds', 2),
};
const jsonPath = resolve(opt('json', resolve(here, '../../target/bench/browser.json')));

/** The scratch files and duet's config: one profile per program the workloads run. */
function prepare(dir) {
  const agent = join(here, 'replay_agent.py');
  const write = (name, text) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const history = write('history.jsonl', `${conversation(cfg.events, HISTORY_LAST).join('\n')}\n`);
  const terminal = write('terminal.txt', terminalText(cfg.historyBytes, HISTORY_END));
  const start = write('start.jsonl', `${conversation(0, 'stream starts').slice(0, 1).join('\n')}\n`);
  const stream = write('stream.jsonl', `${conversation(cfg.streamEvents, 'stream ends').slice(1, cfg.streamEvents + 1).join('\n')}\n`);
  const empty = write('empty.jsonl', '');
  const banner = write('banner.txt', 'stream session\n');
  const goFile = join(dir, 'stream.go');
  const config = write('duet.toml', [
    profile('cat', 'cat', []),
    profile('ready', 'sh', ['-c', `echo ${READY}; exec cat`]),
    profile('history', 'python3', [agent, history, empty, join(dir, 'never.go'), '{events_file}', '0', terminal, '{input_file}']),
    profile('stream', 'python3', [agent, start, stream, goFile, '{events_file}', String(cfg.streamDelayMs / 1000), banner, '{input_file}']),
    profile('flood', floodArgv(cfg.floodBytes)[0], floodArgv(cfg.floodBytes).slice(1)),
  ].join('\n'));
  return { config, goFile };
}

/** What ran: versions of everything in the comparison, the machine. */
function versions(browserVersion) {
  const git = (args) => { try { return execFileSync('git', args, { cwd: here, encoding: 'utf8' }).trim(); } catch { return '?'; } };
  const pkg = JSON.parse(readFileSync(join(here, '../package.json'), 'utf8'));
  const ttydCommit = (() => { try { return readFileSync(join(dirname(dirname(ttydBin())), 'commit'), 'utf8').trim(); } catch { return '?'; } })();
  const ttydVersion = (() => { try { return execFileSync(ttydBin(), ['--version'], { encoding: 'utf8' }).trim(); } catch { return '?'; } })();
  const cpu = cpus();
  return {
    duet: `${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain', '--untracked-files=no']) ? ' (modified)' : ''}`,
    duetXterm: pkg.dependencies['@xterm/xterm'],
    ttyd: `${ttydVersion} (commit ${ttydCommit.slice(0, 7)})`,
    ttydXterm: '5.5.0 (html/yarn.lock at that commit, built into its html.h)',
    chromium: browserVersion,
    node: process.version,
    machine: `${cpu.length} × ${cpu[0]?.model ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB`,
  };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'duet-browser-bench-'));
  const { config, goFile } = prepare(dir);
  const token = randomBytes(16).toString('hex');
  const duet = { ...(await startDuet({ bin: duetBin('../target/release/duet'), config, stateDir: join(dir, 'state'), token })), token };
  const ttyds = [];
  const ttydFor = async (program) => {
    const t = await startTtyd({ argv: program });
    ttyds.push(t);
    return t;
  };
  const browser = await launch();
  const results = { started: new Date().toISOString(), config: cfg, versions: versions(browser.version()), load: {}, workloads };
  const viewport = { width: 1280, height: 800 };
  try {
    const duetCtx = await duetContext(browser, duet, viewport);
    const ttydCtx = await browser.newContext({ viewport });
    for (const w of workloads) {
      results.load[w] = { start: await loadAverage() };
      log(`${w}: load average ${results.load[w].start.join(' ')}`);
      if (w === 'keys') results.keys = await keystrokes({ duetCtx, duet, ttydCtx, ttyd: await ttydFor(['cat']), keys: cfg.keys, warm: cfg.warm, block: cfg.block, gapMs: cfg.gapMs });
      if (w === 'open') results.open = await opening({ duetCtx, duet, ttydCtx, ttyd: await ttydFor(['sh', '-c', `echo ${READY}; exec cat`]), events: cfg.events, loads: cfg.loads });
      if (w === 'memory') results.memory = await tabMemory({ duet, ttyd: await ttydFor(['cat']), events: cfg.streamEvents + 1, goFile });
      if (w === 'flood') results.flood = await flood({ duetCtx, duet, ttydCtx, ttyd: await ttydFor(floodArgv(cfg.floodBytes)), bytes: cfg.floodBytes, rounds: cfg.floodRounds, marker: FLOOD_END });
      results.load[w].end = await loadAverage();
    }
  } finally {
    await browser.close();
    duet.proc.kill('SIGTERM');
    for (const t of ttyds) t.proc.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
  results.finished = new Date().toISOString();
  mkdirSync(dirname(jsonPath), { recursive: true });
  writeFileSync(jsonPath, JSON.stringify(results, null, 2));
  const missed = report(results);
  log(`figures in ${jsonPath}`);
  process.exitCode = missed ? 2 : 0;
}

await main();
