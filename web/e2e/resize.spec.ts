// Issue 27: a phone that joins a session and fits it to its window (a much
// smaller terminal) must not cost the desktop its newest output. The
// server's screen resizes as xterm does: the top rows scroll into the
// scrollback and come back when the terminal grows again, so the desktop
// shows the last turn after the phone has gone, and so does a new tab.
import type { Browser, BrowserContextOptions, Page } from '@playwright/test';
import { expect, expectTerminal, openSession, startSession, test, typeInTerminal, type Duet } from './fixtures';

const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };

type Dump = NonNullable<Awaited<ReturnType<typeof dump>>>;

function dump(page: Page) {
  return page.evaluate(() => window.duet?.screen());
}

/** The size the server's PTY has now. */
async function ptySize(page: Page, duet: Duet, id: string): Promise<string> {
  const res = await page.request.get(`${duet.baseURL}/api/sessions/${encodeURIComponent(id)}`);
  const s = (await res.json()) as { cols: number; rows: number };
  return `${String(s.cols)}x${String(s.rows)}`;
}

/** Waits until the PTY has the size this page's terminal draws at. */
async function sameSize(page: Page, duet: Duet, id: string): Promise<void> {
  await expect.poll(async () => {
    const d = await dump(page);
    return d ? (await ptySize(page, duet, id)) === `${String(d.cols)}x${String(d.rows)}` : false;
  }).toBe(true);
}

/** The visible rows, trimmed. */
function rows(d: Dump | undefined): string[] {
  return (d?.lines ?? []).map((l) => l.text.trimEnd());
}

/**
 * What is wrong with `lines` as the newest output: the numbers up to 120,
 * the marker, then the prompt (wrapped on a phone) and nothing below it.
 */
function notNewest(lines: string[]): string {
  const at = lines.indexOf('LAST-LINE-MARKER');
  if (at < 3) return `no marker after three lines:\n${lines.join('\n')}`;
  if (lines.slice(at - 3, at).join(' ') !== '118 119 120') return `not 118-120 above the marker:\n${lines.join('\n')}`;
  const below = lines.slice(at + 1);
  const end = below.indexOf('');
  const prompt = below.slice(0, end < 0 ? below.length : end);
  if (!/[#$] ?$/.test(prompt.join('')) || prompt.length > 4) return `no prompt below the marker:\n${lines.join('\n')}`;
  if (!below.slice(prompt.length).every((l) => l === '')) return `text below the prompt:\n${lines.join('\n')}`;
  return '';
}

/** Waits until `page`'s terminal shows the newest output; its screen then. */
async function expectNewest(page: Page, who: string): Promise<Dump | undefined> {
  await expect.poll(async () => notNewest(rows(await dump(page))), { message: who }).toBe('');
  return dump(page);
}

async function open(browser: Browser, duet: Duet, opts: BrowserContextOptions): Promise<Page> {
  const page = await (await browser.newContext(opts)).newPage();
  await page.goto(`${duet.baseURL}/?token=${duet.token}`);
  await expect(page.locator('.topbar')).toBeVisible();
  return page;
}

test('a phone that joins and fits leaves the desktop its newest output', async ({ browser, duet }) => {
  test.setTimeout(90_000);
  const desktop = await open(browser, duet, { viewport: { width: 1400, height: 900 } });
  const id = await startSession(desktop, 'shell');
  await sameSize(desktop, duet, id);
  // The shell reads its input once it has printed its prompt.
  await expect.poll(async () => rows(await dump(desktop)).filter((l) => l !== '').pop() ?? '').toMatch(/[#$]$/);
  await typeInTerminal(desktop, 'clear; seq 1 120; echo LAST-LINE-MARKER');
  await desktop.keyboard.press('Enter');
  await expectTerminal(desktop, /^120\nLAST-LINE-MARKER$/m);
  const before = await expectNewest(desktop, 'the desktop at first');

  // A phone joins and takes the size: far fewer rows and columns.
  const phone = await open(browser, duet, PHONE);
  await openSession(phone, duet, id);
  const fit = phone.getByRole('button', { name: 'Fit to my window' });
  await expect(fit).toBeVisible();
  // The phone's terminal takes its window's size, and the server's follows.
  // A press can come to nothing (about one run in three under load: the
  // pane stays a follower at the desktop's size; not yet understood), so it
  // is pressed again until it takes: what this test is about is what the
  // resize keeps.
  await expect(async () => {
    if (await fit.isVisible()) await fit.click();
    expect((await dump(phone))?.rows ?? 0).toBeLessThan(before?.rows ?? 0);
  }).toPass({ timeout: 30_000 });
  await sameSize(phone, duet, id);
  const small = await expectNewest(phone, 'the phone');
  expect(small?.rows).toBeLessThan(before?.rows ?? 0);
  await phone.context().close();

  // The desktop takes its size back.
  const back = desktop.getByRole('button', { name: 'Fit to my window' });
  await expect(back).toBeVisible();
  await back.click();
  await expect.poll(async () => (await dump(desktop))?.rows).toBe(before?.rows);
  await sameSize(desktop, duet, id);
  const after = await expectNewest(desktop, 'the desktop after the phone left');

  // A new tab draws the same screen.
  const tab = await desktop.context().newPage();
  await openSession(tab, duet, id);
  await expect.poll(async () => rows(await dump(tab)).join('\n')).toBe(rows(after).join('\n'));
  await desktop.request.delete(`${duet.baseURL}/api/sessions/${encodeURIComponent(id)}`);
  await desktop.context().close();
});
