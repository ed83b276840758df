// Helpers shared by the browser specs that log in at a given viewport and
// drive a shell or the demo agent: a logged-in context, a session started over
// the API, a shell that reads its input, the page's terminal dump, and where
// screenshots go.
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from '@playwright/test';
import { expect, expectTerminal, screenshotDir, typeInTerminal, type Duet } from './fixtures';

export const DESKTOP = { width: 1400, height: 900 };
export const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true };

/** Where screenshot `name` for people to look at goes. */
export const shot = (name: string): string => join(screenshotDir, `${name}.png`);

/** A new context with `opts`, logged in to `duet`, on the app. */
export async function login(browser: Browser, duet: Duet, opts: BrowserContextOptions): Promise<Page> {
  const ctx = await browser.newContext(opts);
  const page = await ctx.newPage();
  await page.goto(`${duet.baseURL}/?token=${duet.token}`);
  await expect(page.locator('.topbar')).toBeVisible();
  return page;
}


/** Ends every session of `duet`. */
export async function endSessions(page: Page, duet: Duet): Promise<void> {
  const res = await page.request.get(`${duet.baseURL}/api/sessions`);
  for (const s of (await res.json()) as { id: string }[]) await page.request.delete(`${duet.baseURL}/api/sessions/${encodeURIComponent(s.id)}`);
}


/** Starts a session over the API and opens it (the phone's sidebar is a drawer). */
export async function apiStart(page: Page, duet: Duet, profile: string): Promise<string> {
  const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile } });
  const { id } = (await res.json()) as { id: string };
  await page.goto(`${duet.baseURL}/#/session/${encodeURIComponent(id)}`);
  await expect.poll(() => page.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
  return id;
}


/** Waits until the shell reads its input (typing earlier lands in the tty's echo before bash runs). */
export async function shellReady(page: Page): Promise<void> {
  // First the PTY must have this pane's size and the shell its prompt: keys
  // typed while the pane's first resize is on its way are echoed at the old
  // width, and readline's redraw at the new one leaves a line xterm and the
  // shell disagree about (failed ~1 run in 4 on a loaded machine, with this
  // stop's and last stop's builds alike).
  await expect.poll(async () => {
    const d = await page.evaluate(() => window.duet?.screen());
    if (!d) return false;
    const [base, route] = page.url().split('#');
    const id = /^\/session\/([^/?]+)/.exec(route ?? '')?.[1];
    if (id === undefined) return false;
    const res = await page.request.get(`${base ?? ''}api/sessions/${id}`);
    const live = res.ok() ? ((await res.json()) as { cols: number; rows: number }) : undefined;
    const last = d.lines.map((l) => l.text.trimEnd()).filter((t) => t !== '').pop() ?? '';
    return live?.cols === d.cols && live.rows === d.rows && /[#$]$/.test(last);
  }, { timeout: 15_000 }).toBe(true);
  await typeInTerminal(page, 'echo ready-$((40+2))');
  await page.keyboard.press('Enter');
  await expectTerminal(page, /^ready-42$/m);
}

/** What `window.duet.screen()` returns: the terminal's cells as the page shows them. */
export interface Dump { cols: number; rows: number; lines: { text: string; wrapped: boolean }[]; cursor: [number, number]; alt: boolean; driver: boolean; renderer: string }
export const screen = (p: Page): Promise<Dump | undefined> => p.evaluate(() => window.duet?.screen());
