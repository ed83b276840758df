// What a keystroke's echo costs the page: the rows xterm.js redraws must
// restyle and lay out only the terminal. A selector elsewhere that reaches
// into the terminal (a :has() on the workspace did) made Chromium re-check
// the panes around it on every row the terminal drew; without a layout
// boundary at the terminal's screen, each row relaid the grid and panes
// above it; and the app's own redraws at each board tick (once a second of
// output) rewrote unchanged parts of the page. The browser benchmark
// measured these as the gap to ttyd's page (docs/benchmarks.md). Read from
// Chromium's own invalidation tracking and layout roots (a DevTools trace).
import type { CDPSession, Page } from '@playwright/test';
import { endAll, expect, expectTerminal, frames, loginAt, SIZE_NAMES, startSession, test } from './fixtures';

interface TraceEvent {
  name: string;
  args?: {
    data?: { nodeId?: number; nodeName?: string; reason?: string; stackTrace?: { functionName: string }[] };
    endData?: { layoutRoots?: { nodeId: number }[] };
  };
}

/** The trace events Chromium records while `act` runs (its style and layout invalidations, its layouts). */
async function traced(cdp: CDPSession, act: () => Promise<void>): Promise<TraceEvent[]> {
  const events: TraceEvent[] = [];
  cdp.on('Tracing.dataCollected', (d) => { events.push(...(d.value as unknown as TraceEvent[])); });
  const complete = new Promise<void>((ok) => { cdp.once('Tracing.tracingComplete', () => { ok(); }); });
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,disabled-by-default-devtools.timeline.invalidationTracking', transferMode: 'ReportEvents' });
  await act();
  await cdp.send('Tracing.end');
  await complete;
  return events;
}

/** The nodes among `ids` that are in the document and outside the terminal's host (the element xterm.js draws in). */
async function outsideTerminal(cdp: CDPSession, ids: readonly number[]): Promise<number[]> {
  const outside: number[] = [];
  for (const backendNodeId of ids) {
    const node = await cdp.send('DOM.resolveNode', { backendNodeId }).catch(() => undefined);
    const objectId = node?.object.objectId;
    if (objectId === undefined) continue; // gone since: a row's old span
    const { result } = await cdp.send('Runtime.callFunctionOn', {
      objectId,
      returnByValue: true,
      // A node in a shadow tree (the textarea's own editor) counts as its host.
      functionDeclaration: 'function () { const root = this.getRootNode(); const node = root instanceof ShadowRoot ? root.host : this; const el = node instanceof Element ? node : node.parentElement; return !node.isConnected || !!el?.closest(".terminal-pane:not(.terminal-probe) .terminal-host"); }',
    });
    if (result.value !== true) outside.push(backendNodeId);
  }
  return outside;
}

async function focusTerminal(page: Page): Promise<void> {
  await page.locator('.terminal-pane:not(.terminal-probe) .xterm').click();
  await expect(page.locator('.terminal-pane:not(.terminal-probe) .xterm-helper-textarea')).toBeFocused();
}

for (const size of SIZE_NAMES) {
  test(`a keystroke's echo restyles only the terminal (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size);
    // Counts the board's messages (the sidebar's stream), which come at most once a second of output.
    await page.addInitScript(() => {
      const Source = window.EventSource;
      const w = window as unknown as { boardTicks: number };
      w.boardTicks = 0;
      window.EventSource = class extends Source {
        constructor(url: string | URL, init?: EventSourceInit) {
          super(url, init);
          this.addEventListener('sessions', () => { w.boardTicks++; });
        }
      };
    });
    await page.reload();
    const ticks = (): Promise<number> => page.evaluate(() => (window as unknown as { boardTicks: number }).boardTicks);
    try {
      // Started here, at this window's size: its keys need not take the size from another window.
      await startSession(page, 'demo');
      await expect(page.getByRole('status').first()).toContainText('Idle');
      await focusTerminal(page);
      // Settle what opening the session changes (fonts, the first fit) before the trace.
      await page.keyboard.type('w');
      await expectTerminal(page, /w/);
      await frames(page);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('DOM.enable');
      const events = await traced(cdp, async () => {
        const before = await ticks();
        await page.keyboard.type('restyle');
        await expectTerminal(page, /wrestyle/);
        // And the board's news of that output, with what the page redraws for it.
        await expect.poll(ticks).toBeGreaterThan(before);
        await frames(page);
      });
      const touched = events.filter((e) => e.name.endsWith('InvalidationTracking') && e.args?.data?.nodeId !== undefined);
      const roots = events.flatMap((e) => (e.name === 'Layout' ? e.args?.endData?.layoutRoots ?? [] : []));
      // The rows did change and were laid out: the trace saw them (or this test could not fail).
      expect(touched.some((e) => e.name === 'LayoutInvalidationTracking')).toBe(true);
      expect(roots.length).toBeGreaterThan(0);
      const ids = [...new Set(touched.map((e) => e.args?.data?.nodeId ?? 0))];
      const outside = new Set(await outsideTerminal(cdp, ids));
      const named = touched.filter((e) => outside.has(e.args?.data?.nodeId ?? 0)).map((e) => `${e.args?.data?.nodeName ?? '?'}: ${e.args?.data?.reason ?? e.name} (${(e.args?.data?.stackTrace ?? []).map((f) => f.functionName).join(' < ')})`);
      expect([...new Set(named)]).toEqual([]);
      // Each layout started at the terminal's screen (a layout boundary), not at the page.
      const rootIds = [...new Set(roots.map((r) => r.nodeId))];
      expect(await outsideTerminal(cdp, rootIds)).toEqual([]);
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
