// What the browser benchmark installs in a page (duet's and ttyd's alike).
// Each function runs inside the page (page.evaluate), so it is
// self-contained; none of them reads an app's own objects: they find the
// terminal through the DOM that xterm.js's DOM renderer builds on both pages
// (`.xterm` > `.xterm-rows`, one <div> per screen row), so the two pages are
// measured by the same code.

/**
 * Keystroke → painted glyph. After `arm(text)`, the next keydown's
 * `timeStamp` (when the browser took the key in) starts the clock; the
 * DOM renderer's mutation that makes a row read exactly `text` (trailing
 * blanks and the cursor cell aside) is the glyph drawn, and a message posted
 * from that moment runs after the frame that holds it has been painted
 * (xterm draws in a requestAnimationFrame callback; style, layout and paint
 * of that frame follow in the same task, before any posted task). Returns
 * nothing; `window.__keyProbe.wait()` resolves with {key, render, paint}
 * (ms, performance.now()'s clock).
 */
export function installKeyProbe() {
  const ta = document.activeElement;
  const rows = ta?.closest('.xterm')?.querySelector('.xterm-rows');
  if (!ta?.classList.contains('xterm-helper-textarea') || !rows) throw new Error('the focus is not in a DOM-rendered xterm');
  let want = null;
  let key = 0;
  let render = 0;
  let result = null;
  let done = null;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => {
    result = { key, render, paint: performance.now() };
    want = null;
    done?.(result);
    done = null;
  };
  addEventListener('keydown', (ev) => { if (want !== null && key === 0) key = ev.timeStamp; }, true);
  const rowOf = (n) => {
    while (n && n.parentNode !== rows) n = n.parentNode;
    return n;
  };
  new MutationObserver((muts) => {
    if (want === null || key === 0 || render !== 0) return;
    const touched = new Set();
    for (const m of muts) {
      if (m.target === rows) m.addedNodes.forEach((n) => touched.add(n));
      else touched.add(rowOf(m.target));
    }
    for (const row of touched) {
      if (row?.textContent?.trimEnd() === want) {
        render = performance.now();
        channel.port2.postMessage(0);
        return;
      }
    }
  }).observe(rows, { childList: true, subtree: true, characterData: true });
  window.__keyProbe = {
    arm(text) {
      want = text;
      key = 0;
      render = 0;
      result = null;
    },
    wait() {
      return result ? Promise.resolve(result) : new Promise((ok) => { done = ok; });
    },
  };
}

/**
 * Main-thread stalls: every `longtask` entry (tasks over 50 ms, Chromium's
 * Long Tasks API) and the longest gap between animation frames (a rAF loop:
 * what a user sees as a frozen page). `window.__jank.read(since)` gives the
 * figures for entries that started at or after `since`.
 */
export function installJankProbe() {
  const tasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) tasks.push({ start: e.startTime, ms: e.duration }); }).observe({ type: 'longtask', buffered: true });
  const gaps = [];
  let last = performance.now();
  let on = true;
  const tick = (t) => {
    gaps.push({ start: last, ms: t - last });
    last = t;
    if (on) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__jank = {
    read(since = 0) {
      const ts = tasks.filter((x) => x.start >= since);
      const gs = gaps.filter((x) => x.start >= since);
      return {
        longTasks: ts.length,
        longestTaskMs: Math.max(0, ...ts.map((x) => x.ms)),
        blockingMs: ts.reduce((a, x) => a + x.ms - 50, 0),
        frames: gs.length,
        longestFrameGapMs: Math.max(0, ...gs.map((x) => x.ms)),
        now: performance.now(),
      };
    },
    stop() { on = false; },
  };
}

/**
 * Navigation → an interactive page, from the document's start (an init
 * script): checked every animation frame until the terminal's rows show
 * `terminal`, the chat's last entry shows `chat` (unless null) and the
 * prompt box can be typed in (unless `composer` is false). `ready` is the
 * time the frame that first met all three had been painted (a message
 * posted from its rAF runs after its paint). `window.__open` holds the
 * figures, performance.now()'s clock (0 = navigation start).
 */
export function installOpenProbe({ terminal, chat, composer }) {
  const out = { terminal: 0, chat: chat === null ? -1 : 0, composer: composer ? 0 : -1, ready: 0 };
  window.__open = out;
  const channel = new MessageChannel();
  channel.port1.onmessage = () => { out.ready = performance.now(); };
  const check = () => {
    const now = performance.now();
    if (out.terminal === 0 && [...document.querySelectorAll('.xterm-rows')].some((r) => r.textContent.includes(terminal))) out.terminal = now;
    if (out.chat === 0) {
      const items = document.querySelectorAll('.chat-log > [data-kind]');
      if (items.length > 0 && items[items.length - 1].textContent.includes(chat)) out.chat = now;
    }
    if (out.composer === 0) {
      const box = document.querySelector('.composer-input');
      if (box && !box.disabled && box.offsetParent !== null) out.composer = now;
    }
    if (out.terminal !== 0 && out.chat !== 0 && out.composer !== 0) {
      channel.port2.postMessage(0);
      return;
    }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}

/** The visible rows of the page's terminal as text, read from its DOM (cheap: a screenful). */
export function visibleRows() {
  return [...document.querySelectorAll('.xterm-rows')].map((rows) => [...rows.children].map((r) => r.textContent.trimEnd()).join('\n')).join('\n');
}

/**
 * The chat log's length and how many of its entries have elements: the log
 * draws only the entries near its view, each saying its place in the whole
 * (`aria-setsize`); with none drawn, the drawn count is all there is.
 */
export function chatEntries() {
  const drawn = document.querySelectorAll('.chat-log > [data-kind]');
  const last = drawn[drawn.length - 1];
  const total = Number(last?.getAttribute('aria-setsize') ?? drawn.length);
  return { total, drawn: drawn.length };
}
