// Opening duet's and ttyd's pages in Debian's Chromium, the way the browser
// tests launch it (web/playwright.config.ts), and typing into them.
import { chromium } from '@playwright/test';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, extname, join } from 'node:path';

/** Chromium's flags: those of the browser tests; `extra` for one run's needs. */
export function launch(extra = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extra],
  });
}

const TYPES = { '.js': 'text/javascript', '.css': 'text/css' };

/** `index-BqLCM8qx.js` → `index.js`: an asset's name without vite's content hash. */
const unhashed = (name) => name.replace(/-[A-Za-z0-9_-]{8}(\.[a-z]+)$/, '$1');

/**
 * With $DUET_WEB_DIST (a `vite build` output), the page's scripts and styles
 * come from there instead of the ones built into the duet binary (matched by
 * name without the hash): a change to web/src measured without rebuilding
 * the server. The document itself, the API and the WebSockets still come
 * from duet (a document Playwright made up would be no local page, and
 * Chromium would block its WebSocket to 127.0.0.1).
 */
async function serveWebDist(ctx, duet) {
  const dist = process.env.DUET_WEB_DIST;
  if (!dist) return;
  const files = new Map(readdirSync(join(dist, 'assets')).map((f) => [unhashed(f), join(dist, 'assets', f)]));
  await ctx.route(`${duet.url}/assets/**`, (route) => {
    const file = files.get(unhashed(basename(new URL(route.request().url()).pathname)));
    if (!file) return route.fallback();
    return route.fulfill({ body: readFileSync(file), contentType: TYPES[extname(file)] ?? 'application/octet-stream' });
  });
}

/** A browser context logged in to duet (its token traded for the cookie). */
export async function duetContext(browser, duet, viewport) {
  const ctx = await browser.newContext({ viewport });
  await serveWebDist(ctx, duet);
  const p = await ctx.newPage();
  await p.goto(`${duet.url}/?token=${duet.token}`);
  await p.close();
  return ctx;
}

/** Creates a duet session of `profile`; its id. */
export async function createSession(ctx, duet, profile) {
  const res = await ctx.request.post(`${duet.url}/api/sessions`, { data: { profile } });
  if (!res.ok()) throw new Error(`creating a ${profile} session: ${res.status()} ${await res.text()}`);
  return (await res.json()).id;
}

/** The session's metadata (`last_seq`, ...). */
export async function sessionInfo(ctx, duet, id) {
  return (await ctx.request.get(`${duet.url}/api/sessions/${id}`)).json();
}

/** The session's screen as the server holds it. */
export async function sessionScreen(ctx, duet, id) {
  return (await ctx.request.get(`${duet.url}/api/sessions/${id}/screen`)).text();
}

/** Where each page keeps its terminal. */
export const TERMINAL = { duet: '.terminal-pane .xterm', ttyd: '#terminal-container .xterm' };

/** Gives the page's terminal the keyboard (a click, as a user would) and checks it has it. */
export async function focusTerminal(page, which) {
  await page.locator(TERMINAL[which]).first().click();
  await page.waitForFunction(() => document.activeElement?.classList.contains('xterm-helper-textarea'));
}

/** Opens a duet session's page with its terminal drawn and focused. */
export async function openDuet(ctx, duet, id) {
  const page = await ctx.newPage();
  await page.goto(`${duet.url}/#/session/${encodeURIComponent(id)}`);
  await page.waitForFunction(() => window.duet?.connected() === true, null, { timeout: 60_000 });
  await focusTerminal(page, 'duet');
  return page;
}

/** Opens ttyd's page (its program starts now) with its terminal focused. */
export async function openTtyd(ctx, ttyd) {
  const page = await ctx.newPage();
  await page.goto(ttyd.url);
  await page.waitForFunction(() => window.term !== undefined && document.querySelector('.xterm-rows') !== null, null, { timeout: 60_000 });
  await focusTerminal(page, 'ttyd');
  return page;
}

/** A key as a keyboard sends it, through CDP (Input.dispatchKeyEvent): keyDown with its text, then keyUp. */
export async function press(cdp, ch) {
  const k = ch === '\r'
    ? { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: '\r' }
    : { key: ch, code: `Key${ch.toUpperCase()}`, windowsVirtualKeyCode: ch.toUpperCase().charCodeAt(0), text: ch };
  await cdp.send('Input.dispatchKeyEvent', { type: 'keyDown', ...k, unmodifiedText: k.text });
  await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', key: k.key, code: k.code, windowsVirtualKeyCode: k.windowsVirtualKeyCode });
}
