// A flood rendered in the page: the program waits for Enter, then prints
// `bytes` of base64 from /dev/urandom and an end marker, then idles (ttyd
// drops what a program printed just before it exits; see
// docs/benchmarks.md). Timed from the key to the marker on the page's
// screen; the page's long tasks and frame gaps in between (probes.mjs:
// installJankProbe). Both pages draw with xterm's DOM renderer.
import { installJankProbe, visibleRows } from './probes.mjs';
import { createSession, openDuet, openTtyd, press } from './pages.mjs';
import { log, sleep } from './stats.mjs';

export const FLOOD_END = 'FLOOD-END-MARKER';

/** The flood program's argv: `bytes` of base64 output (76 columns, 4 characters per 3 random bytes). */
export function floodArgv(bytes) {
  const raw = Math.round((bytes * 3) / 4);
  return ['sh', '-c', `read _; head -c ${raw} /dev/urandom | base64; echo ${FLOOD_END}; exec sleep 3600`];
}

/** One flood in `page`: seconds from Enter to the marker drawn, and the stalls in between. */
async function once(ctx, page, bytes) {
  await page.evaluate(installJankProbe);
  await sleep(500);
  const cdp = await ctx.newCDPSession(page);
  const since = await page.evaluate(() => performance.now());
  const t0 = Date.now();
  await press(cdp, '\r');
  for (;;) {
    await sleep(250);
    if ((await page.evaluate(visibleRows)).includes(FLOOD_END)) break;
    if (Date.now() - t0 > 900_000) throw new Error('flood: no end marker in 15 minutes');
  }
  const seconds = (Date.now() - t0) / 1000;
  const jank = await page.evaluate((s) => window.__jank.read(s), since);
  return { seconds, mbPerSecond: bytes / 1e6 / seconds, ...jank };
}

/** `rounds` floods on each page, alternating which goes first. */
export async function flood({ duetCtx, duet, ttydCtx, ttyd, bytes, rounds }) {
  const runs = { duet: [], ttyd: [] };
  for (let i = 0; i < rounds; i++) {
    for (const which of i % 2 === 0 ? ['duet', 'ttyd'] : ['ttyd', 'duet']) {
      let page;
      let id;
      if (which === 'duet') {
        id = await createSession(duetCtx, duet, 'flood');
        page = await openDuet(duetCtx, duet, id);
      } else {
        page = await openTtyd(ttydCtx, ttyd);
      }
      const r = await once(which === 'duet' ? duetCtx : ttydCtx, page, bytes);
      runs[which].push(r);
      log(`flood ${which} round ${i + 1}: ${r.seconds.toFixed(1)} s, longest task ${Math.round(r.longestTaskMs)} ms, longest frame gap ${Math.round(r.longestFrameGapMs)} ms, ${r.longTasks} long tasks`);
      await page.close();
      if (id) await duetCtx.request.delete(`${duet.url}/api/sessions/${id}`);
    }
  }
  return runs;
}
