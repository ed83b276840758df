// Opening a long session: navigation → the terminal drawn, the chat's
// history shown and the prompt box usable (probes.mjs: installOpenProbe).
// The session's program printed `terminalBytes` of terminal output and wrote
// `events` side-channel events before the first page opens. The same is
// timed for a session with nothing behind it (one line on its terminal, no
// chat) and for ttyd's page with the same one-line program: the floor of
// each page.
import { chatEntries, installJankProbe, installOpenProbe } from './probes.mjs';
import { createSession, sessionInfo, sessionScreen } from './pages.mjs';
import { log, sleep, summary } from './stats.mjs';

export const HISTORY_END = 'HISTORY-TERMINAL-END';
export const HISTORY_LAST = 'HISTORY-LAST-MESSAGE';
export const READY = 'TERMINAL-READY';

/** One load of `url` in a fresh page; the probe's figures and the long tasks up to ready. */
async function once(ctx, url, want) {
  const page = await ctx.newPage();
  await page.addInitScript(installOpenProbe, want);
  await page.addInitScript(installJankProbe);
  await page.goto(url);
  await page.waitForFunction(() => window.__open?.ready > 0, null, { timeout: 120_000, polling: 100 });
  // What the next second holds: a page "ready" but then frozen is not usable.
  await sleep(1000);
  const r = await page.evaluate(() => {
    const o = window.__open;
    const all = window.__jank.read(0);
    const after = window.__jank.read(o.ready);
    return { ...o, longestTaskMs: all.longestTaskMs, longTasks: all.longTasks, longestTaskAfterMs: after.longestTaskMs };
  });
  await page.close();
  return r;
}

/** Waits until the server has the whole history: `n` events and `marker` on the screen. */
async function written(ctx, duet, id, n, marker) {
  const t0 = Date.now();
  for (;;) {
    const info = await sessionInfo(ctx, duet, id);
    if (info.last_seq >= n && (await sessionScreen(ctx, duet, id)).includes(marker)) return;
    if (Date.now() - t0 > 300_000) throw new Error(`session ${id}: history not written (last_seq ${info.last_seq})`);
    await sleep(200);
  }
}

/** `loads` loads of each page; medians, ranges and every load's figures. */
export async function opening({ duetCtx, duet, ttydCtx, ttyd, events, loads }) {
  const id = await createSession(duetCtx, duet, 'history');
  await written(duetCtx, duet, id, events, HISTORY_END);
  const floor = await createSession(duetCtx, duet, 'ready');
  await written(duetCtx, duet, floor, 0, READY);
  const runs = { history: [], duetEmpty: [], ttyd: [] };
  for (let i = 0; i < loads; i++) {
    // Alternate, so a change in the machine's load touches all three alike.
    runs.history.push(await once(duetCtx, `${duet.url}/#/session/${encodeURIComponent(id)}`, { terminal: HISTORY_END, chat: HISTORY_LAST, composer: true }));
    runs.duetEmpty.push(await once(duetCtx, `${duet.url}/#/session/${encodeURIComponent(floor)}`, { terminal: READY, chat: null, composer: false }));
    runs.ttyd.push(await once(ttydCtx, ttyd.url, { terminal: READY, chat: null, composer: false }));
    log(`open: load ${i + 1}/${loads}: history ${Math.round(runs.history[i].ready)} ms, empty ${Math.round(runs.duetEmpty[i].ready)} ms, ttyd ${Math.round(runs.ttyd[i].ready)} ms`);
  }
  const items = await (async () => {
    const p = await duetCtx.newPage();
    await p.goto(`${duet.url}/#/session/${encodeURIComponent(id)}`);
    await p.waitForFunction((m) => document.querySelector('.chat-log')?.textContent.includes(m), HISTORY_LAST, { timeout: 120_000 });
    const n = await p.evaluate(chatEntries);
    await p.close();
    return n;
  })();
  for (const s of [id, floor]) await duetCtx.request.delete(`${duet.url}/api/sessions/${s}`);
  const fig = (rs) => ({ ready: summary(rs.map((r) => r.ready)), terminal: summary(rs.map((r) => r.terminal)), chat: summary(rs.map((r) => r.chat)), composer: summary(rs.map((r) => r.composer)), longestTaskMs: summary(rs.map((r) => r.longestTaskMs)), longestTaskAfterMs: summary(rs.map((r) => r.longestTaskAfterMs)), loads: rs });
  return { events, chatEntries: items, history: fig(runs.history), duetEmpty: fig(runs.duetEmpty), ttyd: fig(runs.ttyd) };
}
