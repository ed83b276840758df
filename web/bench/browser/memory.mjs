// A tab's memory after a long stream of side-channel events. Each tab gets
// a browser of its own (one page, no spare renderer), so the renderer
// process Linux shows is that tab's. Chromium's own figures come from CDP
// (Performance.getMetrics: the JS heap, DOM nodes); the process's from
// /proc (RSS, PSS, private pages). The duet tab is measured on a session
// whose agent streams `events` events while the page is open; ttyd's tab,
// running `cat`, is the floor of a terminal page.
import { writeFileSync } from 'node:fs';
import { createSession, duetContext, launch, openDuet, openTtyd } from './pages.mjs';
import { chatEntries } from './probes.mjs';
import { memory, renderers } from './proc.mjs';
import { log, sleep } from './stats.mjs';

const FLAGS = ['--disable-features=SpareRendererForSitePerProcess'];
const MB = 1e6;

/** The page's figures now: CDP metrics and its renderer's memory. */
async function measure(cdp, page) {
  const m = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((x) => [x.name, x.value]));
  const pids = renderers();
  const procs = pids.map((pid) => ({ pid, ...memory(pid) })).sort((a, b) => b.rssKb - a.rssKb);
  // The page's renderer is the largest; any other (an about:blank's) is listed.
  const r = procs[0];
  if (!r) throw new Error('no renderer process found under this script');
  return {
    jsHeapUsedMB: m.JSHeapUsedSize / MB,
    jsHeapTotalMB: m.JSHeapTotalSize / MB,
    domNodes: m.Nodes,
    listeners: m.JSEventListeners,
    rendererRssMB: (r.rssKb * 1024) / MB,
    rendererRssFileMB: (r.fileKb * 1024) / MB,
    rendererPssMB: (r.pssKb * 1024) / MB,
    rendererPrivateMB: (r.privateKb * 1024) / MB,
    renderers: procs.map((p) => `${p.pid}: ${Math.round(p.rssKb / 1024)} MiB`).join(', '),
    chatEntries: await page.evaluate(chatEntries),
  };
}

/** Now, then after a full collection (HeapProfiler.collectGarbage). */
async function both(cdp, page) {
  await sleep(1000);
  const now = await measure(cdp, page);
  await cdp.send('HeapProfiler.collectGarbage');
  await sleep(1000);
  return { now, afterGc: await measure(cdp, page) };
}

export async function tabMemory({ duet, ttyd, events, goFile }) {
  const out = {};
  {
    const browser = await launch(FLAGS);
    try {
      const ctx = await duetContext(browser, duet, { width: 1280, height: 800 });
      const id = await createSession(ctx, duet, 'stream');
      const page = await openDuet(ctx, duet, id);
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Performance.enable');
      out.duetBefore = await both(cdp, page);
      const t0 = Date.now();
      writeFileSync(goFile, '');
      // The renderer's PSS twice a second while the events stream: its peak.
      out.peakPssMB = 0;
      for (;;) {
        const pid = renderers().map((p) => ({ p, ...memory(p) })).sort((a, b) => b.rssKb - a.rssKb)[0];
        out.peakPssMB = Math.max(out.peakPssMB, (pid.pssKb * 1024) / MB);
        if ((await page.evaluate(() => window.duet?.state()?.lastSeq ?? 0)) >= events) break;
        if (Date.now() - t0 > 600_000) throw new Error('memory: the stream did not end in 10 minutes');
        await sleep(500);
      }
      out.streamSeconds = (Date.now() - t0) / 1000;
      log(`memory: ${events} events streamed in ${out.streamSeconds} s`);
      out.duetAfter = await both(cdp, page);
      await ctx.request.delete(`${duet.url}/api/sessions/${id}`);
    } finally {
      await browser.close();
    }
  }
  {
    const browser = await launch(FLAGS);
    try {
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await openTtyd(ctx, ttyd);
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Performance.enable');
      out.ttyd = await both(cdp, page);
    } finally {
      await browser.close();
    }
  }
  return out;
}
