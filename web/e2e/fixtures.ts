// Test fixtures: a real `duet serve` per worker (port 0, a fresh state dir, a
// random token), and helpers to open sessions and read both panes. We wait on
// the server's ready line and on page conditions, never on sleeps.
import { test as base, expect, type Browser, type BrowserContextOptions, type Page } from '@playwright/test';
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const webRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A running duet server. */
export interface Duet {
  readonly baseURL: string;
  readonly token: string;
  readonly stateDir: string;
}

/** How long the server may take to print its ready line. */
const READY_TIMEOUT = 30_000;

/**
 * Starts `duet serve` on port 0 with a fresh state dir; `extraArgs` go after the defaults (e.g. `--config FILE`).
 * With `again` (a server that has stopped or was killed), a restart of it over its port, token and state dir. Stop it with `stopDuet`.
 */
export async function startDuet(extraArgs: readonly string[] = [], again?: Duet): Promise<{ duet: Duet; proc: ChildProcessByStdio<null, Readable, Readable> }> {
  const bin = resolve(webRoot, process.env.DUET_BIN ?? '../target/debug/duet');
  if (!existsSync(bin)) {
    throw new Error(`duet binary not found at ${bin}: build it (cargo build) or set DUET_BIN`);
  }
  const token = again?.token ?? randomBytes(16).toString('hex');
  const stateDir = again?.stateDir ?? mkdtempSync(join(tmpdir(), 'duet-e2e-'));
  const listen = again ? new URL(again.baseURL).host : '127.0.0.1:0';
  const proc = spawn(bin, ['serve', '--listen', listen, '--token', token, '--state-dir', stateDir, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' },
  });
  let stderr = '';
  proc.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const baseURL = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => { fail(new Error(`duet printed no ready line in ${READY_TIMEOUT} ms\n${stderr}`)); }, READY_TIMEOUT);
    const lines = createInterface({ input: proc.stdout });
    lines.on('line', (line) => {
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(line);
      if (m) {
        clearTimeout(timer);
        ok(`http://127.0.0.1:${m[1] ?? ''}`);
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`duet exited early (code ${String(code)})\n${stderr}`));
    });
  });
  return { duet: { baseURL, token, stateDir }, proc };
}

/** Stops a server from `startDuet` and removes its state dir. */
export async function stopDuet(proc: ChildProcess, stateDir: string): Promise<void> {
  // Not when it has exited or was killed (a killed process has no exit code).
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((ok) => proc.once('exit', ok));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(stateDir, { recursive: true, force: true });
}

/** The fixtures every spec gets. */
export const test = base.extend<{ loggedIn: Page }, { duet: Duet }>({
  duet: [
    // eslint-disable-next-line no-empty-pattern -- Playwright requires the destructuring pattern
    async ({}, use) => {
      const { duet, proc } = await startDuet();
      try {
        await use(duet);
      } finally {
        await stopDuet(proc, duet.stateDir);
      }
    },
    { scope: 'worker' },
  ],
  /** A page with the session cookie, on the app. */
  loggedIn: async ({ page, duet }, use) => {
    // The server trades ?token= for the cookie and redirects to a clean `/`.
    await page.goto(`${duet.baseURL}/?token=${duet.token}`);
    await expect(page).toHaveURL(`${duet.baseURL}/`);
    if ((await page.locator('#app').count()) === 0) {
      throw new Error('duet serves no web UI: build web/ (npm run build) before building duet');
    }
    await expect(page.locator('.topbar')).toBeVisible();
    await use(page);
    // End this test's sessions: idle agents still cost CPU, and tests share the server.
    const res = await page.request.get(`${duet.baseURL}/api/sessions`);
    const sessions = (await res.json()) as { id: string; status: string }[];
    for (const s of sessions) await page.request.delete(`${duet.baseURL}/api/sessions/${encodeURIComponent(s.id)}`);
  },
});

export { expect };

/** Starts a session of `profile` through the UI and waits until its socket is greeted. */
export async function startSession(page: Page, profile: string): Promise<string> {
  // Below 1024 px the sidebar is a drawer: open it first.
  const menu = page.locator('.topbar .menu');
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) === 'false') await menu.click();
  const select = page.locator('.profile-select');
  if (await select.isVisible()) await select.selectOption(profile);
  await page.locator('.new-session button[type=submit]').click();
  await expect(page).toHaveURL(/#\/session\//);
  const id = decodeURIComponent(new URL(page.url()).hash.replace('#/session/', ''));
  await waitGreeted(page);
  return id;
}

/** Opens an existing session in `page` (e.g. a second tab). */
export async function openSession(page: Page, duet: Duet, id: string): Promise<void> {
  await page.goto(`${duet.baseURL}/?token=${duet.token}`);
  await page.goto(`${duet.baseURL}/#/session/${encodeURIComponent(id)}`);
  await waitGreeted(page);
}

/** Waits until the open session's socket has its hello (the chat knows the server's state). */
export async function waitGreeted(page: Page): Promise<void> {
  await expect.poll(() => page.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
}

/** Resolves once the page has drawn two more frames (what was scheduled for the next one is on screen). */
export function frames(page: Page): Promise<void> {
  return page.evaluate(() => new Promise<void>((done) => { requestAnimationFrame(() => { requestAnimationFrame(() => { done(); }); }); }));
}

/** The terminal's buffer as text. */
export async function terminalText(page: Page): Promise<string> {
  return page.evaluate(() => window.duet?.terminalText() ?? '');
}

/** Waits until the terminal shows `re`. */
export async function expectTerminal(page: Page, re: RegExp): Promise<void> {
  await expect.poll(() => terminalText(page), { message: `terminal shows ${re}` }).toMatch(re);
}

/** The transcript as "kind: text" lines, for order and duplicate checks. */
export async function transcript(page: Page): Promise<string[]> {
  return page.locator('.chat-log > [data-kind]').evaluateAll((els) =>
    els.map((e) => `${e.getAttribute('data-kind') ?? ''}: ${(e.querySelector('.bubble, .markdown, .tool-name') ?? e).textContent.trim()}`),
  );
}

/** Types into the chat composer and sends with Enter. */
export async function sendChat(page: Page, text: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
}

/** Types into the terminal (as keystrokes). */
export async function typeInTerminal(page: Page, text: string): Promise<void> {
  await page.locator('.terminal-pane .xterm').click();
  await page.keyboard.type(text);
}

/** Where the screenshots for people to look at go. */
export const screenshotDir = resolve(webRoot, 'test-results/screenshots');

/** The two sizes every change of the UI is checked at: a laptop window and a phone (pixel ratio 3, touch). */
export const SIZES = {
  desktop: { viewport: { width: 1400, height: 900 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, hasTouch: true },
} as const satisfies Record<string, BrowserContextOptions>;
export type Size = keyof typeof SIZES;
export const SIZE_NAMES = Object.keys(SIZES) as Size[];

/** A new context at `size` (plus `extra`), logged in to `duet`, on the app. */
export async function loginAt(browser: Browser, duet: Duet, size: Size, extra: BrowserContextOptions = {}): Promise<Page> {
  const ctx = await browser.newContext({ ...SIZES[size], ...extra });
  const page = await ctx.newPage();
  await page.goto(`${duet.baseURL}/?token=${duet.token}`);
  await expect(page.locator('.topbar')).toBeVisible();
  return page;
}

/** Starts a session over the REST API (at `size` when given) and returns its id. */
export async function apiCreate(page: Page, duet: Duet, profile: string, size?: { cols: number; rows: number }): Promise<string> {
  const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile, ...size } });
  expect(res.status()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Opens session `id` in `page` and waits until its socket is greeted. */
export async function openId(page: Page, duet: Duet, id: string): Promise<void> {
  await page.goto(`${duet.baseURL}/#/session/${encodeURIComponent(id)}`);
  await waitGreeted(page);
}

/** Ends every session of `duet` (a test's own, on a shared server). */
export async function endAll(page: Page, duet: Duet): Promise<void> {
  const res = await page.request.get(`${duet.baseURL}/api/sessions`);
  for (const s of (await res.json()) as { id: string }[]) await page.request.delete(`${duet.baseURL}/api/sessions/${encodeURIComponent(s.id)}?purge=true`);
}

/** Opens the sessions drawer when it is one (below 1024 px). */
export async function showSidebar(page: Page): Promise<void> {
  const menu = page.locator('.topbar .menu');
  if ((await menu.getAttribute('aria-expanded')) === 'false') await menu.click();
  await expect(page.locator('.sidebar')).toBeVisible();
}

/** Closes the sessions drawer if it is open (below 1024 px it lies over the page). */
export async function hideSidebar(page: Page): Promise<void> {
  if (await page.locator('.app.sidebar-open').count()) await page.locator('.topbar .menu').click();
  await expect(page.locator('.app.sidebar-open')).toHaveCount(0);
}
