// The browser benchmark's table (Markdown, for docs/benchmarks.md) and its
// verdict against issue 32's targets. Returns true when a target was missed.

const ms = (x) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '—');
const mb = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
/** "848 chat entries (40 drawn)"; a number alone from a run before the log was windowed. */
const entries = (c) => (typeof c === 'number' ? `${c} chat entries` : `${c.total} chat entries (${c.drawn} drawn)`);
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '—');

export function report(r) {
  const rows = [];
  const notes = [];
  let missed = false;
  const row = (workload, metric, duet, ttyd, rat, target, ok) => {
    if (ok === false) missed = true;
    rows.push(`| ${workload} | ${metric} | ${duet} | ${ttyd} | ${rat} | ${target} | ${ok === undefined ? 'info' : ok ? 'pass' : '**MISS**'} |`);
  };
  if (r.keys) {
    const { duet: d, ttyd: t } = r.keys;
    for (const q of ['p50', 'p99']) {
      row('keystroke → painted glyph', `${q} of ${d.paint.n} keys (ms)`, ms(d.paint[q]), ms(t.paint[q]), ratio(d.paint[q], t.paint[q]), '≤ 1.10× ttyd', d.paint[q] <= 1.1 * t.paint[q]);
    }
    row('keystroke → painted glyph', 'p50 key → row drawn, before paint (ms)', ms(d.render.p50), ms(t.render.p50), ratio(d.render.p50, t.render.p50), '—');
    notes.push(`keys: mean duet ${ms(d.paint.mean)} / ttyd ${ms(t.paint.mean)} ms, max duet ${ms(d.paint.max)} / ttyd ${ms(t.paint.max)} ms; renderers ${JSON.stringify(r.keys.renderers)}`);
  }
  if (r.open) {
    const { history: h, duetEmpty: e, ttyd: t } = r.open;
    const n = h.ready.n;
    row('open a long session', `${r.open.events} events + ${r.config.historyBytes / 2 ** 20} MiB terminal → interactive, median of ${n} (ms)`, ms(h.ready.p50), '—', '—', '< 1000', h.ready.p50 < 1000);
    row('open a long session', `the same, slowest of ${n} (ms)`, ms(h.ready.max), '—', '—', '—');
    row('open a long session', 'of which: terminal drawn / chat shown / prompt box usable, medians (ms)', `${ms(h.terminal.p50)} / ${ms(h.chat.p50)} / ${ms(h.composer.p50)}`, '—', '—', '—');
    row('open a long session', 'longest task while loading, median (ms)', ms(h.longestTaskMs.p50), '—', '—', '—');
    row('open a page', `a one-line terminal, no chat → drawn, median of ${n} (ms)`, ms(e.ready.p50), ms(t.ready.p50), ratio(e.ready.p50, t.ready.p50), '—');
    notes.push(`open: history loads ${h.loads.map((x) => ms(x.ready)).join('/')} ms (${entries(r.open.chatEntries)}); longest task after ready ${h.loads.map((x) => ms(x.longestTaskAfterMs)).join('/')} ms; empty ${e.loads.map((x) => ms(x.ready)).join('/')}; ttyd ${t.loads.map((x) => ms(x.ready)).join('/')}`);
  }
  if (r.memory) {
    const { duetBefore: b, duetAfter: a, ttyd: t } = r.memory;
    row('tab memory', `renderer PSS after ${r.config.streamEvents} streamed events (MB)`, mb(a.now.rendererPssMB), mb(t.now.rendererPssMB), ratio(a.now.rendererPssMB, t.now.rendererPssMB), '< 150', a.now.rendererPssMB < 150);
    row('tab memory', 'renderer PSS, peak while the events streamed (sampled every 0.5 s) / after a full GC (MB)', `${mb(r.memory.peakPssMB)} / ${mb(a.afterGc.rendererPssMB)}`, '—', '—', '—');
    row('tab memory', 'renderer RSS / of which file mappings (Chromium\'s code) / private (MB)', `${mb(a.now.rendererRssMB)} / ${mb(a.now.rendererRssFileMB)} / ${mb(a.now.rendererPrivateMB)}`, `${mb(t.now.rendererRssMB)} / ${mb(t.now.rendererRssFileMB)} / ${mb(t.now.rendererPrivateMB)}`, '—', '—');
    row('tab memory', 'JS heap used, the same moment / after a full GC (MB)', `${mb(a.now.jsHeapUsedMB)} / ${mb(a.afterGc.jsHeapUsedMB)}`, `${mb(t.now.jsHeapUsedMB)} / ${mb(t.afterGc.jsHeapUsedMB)}`, '—', '—');
    row('tab memory', 'before the stream: renderer PSS / JS heap used (MB)', `${mb(b.now.rendererPssMB)} / ${mb(b.now.jsHeapUsedMB)}`, '—', '—', '—');
    notes.push(`memory: streamed in ${r.memory.streamSeconds} s; ${entries(a.now.chatEntries)}; DOM nodes ${a.now.domNodes} (before ${b.now.domNodes}); after a full GC: PSS ${mb(a.afterGc.rendererPssMB)}, RSS ${mb(a.afterGc.rendererRssMB)} MB; renderer processes (RSS) ${a.now.renderers}`);
  }
  if (r.flood) {
    const { duet: d, ttyd: t } = r.flood;
    const worst = (xs, k) => Math.max(...xs.map((x) => x[k]));
    const best = (xs, k) => Math.min(...xs.map((x) => x[k]));
    const mib = r.config.floodBytes / 2 ** 20;
    row('flood', `${mib} MiB of base64: longest main-thread task, worst of ${d.length} (ms)`, ms(worst(d, 'longestTaskMs')), ms(worst(t, 'longestTaskMs')), ratio(worst(d, 'longestTaskMs'), worst(t, 'longestTaskMs')), '< 200', worst(d, 'longestTaskMs') < 200);
    row('flood', 'longest gap between frames, worst (ms)', ms(worst(d, 'longestFrameGapMs')), ms(worst(t, 'longestFrameGapMs')), ratio(worst(d, 'longestFrameGapMs'), worst(t, 'longestFrameGapMs')), '—');
    row('flood', 'key → end marker drawn, best (s)', best(d, 'seconds').toFixed(1), best(t, 'seconds').toFixed(1), ratio(best(d, 'seconds'), best(t, 'seconds')), '—');
    notes.push(`flood: duet rounds ${d.map((x) => `${x.seconds.toFixed(1)} s, ${x.longTasks} long tasks (${ms(x.longestTaskMs)} ms), ${x.frames} frames`).join('; ')}`);
    notes.push(`flood: ttyd rounds ${t.map((x) => `${x.seconds.toFixed(1)} s, ${x.longTasks} long tasks (${ms(x.longestTaskMs)} ms), ${x.frames} frames`).join('; ')}`);
  }
  const v = r.versions;
  console.log(`duet ${v.duet} (xterm ${v.duetXterm}) · ttyd ${v.ttyd} (xterm ${v.ttydXterm}) · Chromium ${v.chromium} · ${v.machine}`);
  console.log(`load average at the start of each workload: ${Object.entries(r.load).map(([w, l]) => `${w} ${l.start.join('/')}`).join(', ')}`);
  console.log('');
  console.log('| workload | metric | duet | ttyd | duet ÷ ttyd | target | result |');
  console.log('|---|---|---:|---:|---:|---|---|');
  for (const x of rows) console.log(x);
  console.log('');
  for (const n of notes) console.log(`- ${n}`);
  return missed;
}
