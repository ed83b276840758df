// A window that follows a terminal larger than its pane (another window set
// the size): it sees all of it, shrunk to fit or at full size and scrolled,
// as its user chose (remembered by the browser). "Fit to my window" says on
// the button that it resizes the terminal for everyone; a viewer, who may
// not resize, gets neither Fit nor the phone's key bar, only the view.
import type { Page } from '@playwright/test';
import { apiCreate, endAll, expect, expectTerminal, loginAt, openId, SIZE_NAMES, SIZES, test, type Duet } from './fixtures';

/** Wider and taller than either size's pane. */
const BIG = { cols: 220, rows: 70 };

/** The terminal's drawn box and the pane's room (client rects: after the scale). */
async function boxes(page: Page): Promise<{ term: DOMRect; host: DOMRect; scale: string | undefined; cols: number }> {
  return page.evaluate(() => {
    const host = document.querySelector<HTMLElement>('.terminal-pane:not(.terminal-probe) .terminal-host');
    const term = host?.querySelector<HTMLElement>('.xterm');
    if (!host || !term) throw new Error('no terminal');
    return { term: term.getBoundingClientRect().toJSON() as DOMRect, host: host.getBoundingClientRect().toJSON() as DOMRect, scale: term.dataset.scale, cols: window.duet?.screen()?.cols ?? 0 };
  });
}

async function shareLink(page: Page, duet: Duet, id: string, role: string): Promise<string> {
  const res = await page.request.post(`${duet.baseURL}/api/sessions/${id}/shares`, { data: { role, expires_in: 3600 } });
  expect(res.status()).toBe(201);
  return `${duet.baseURL}${((await res.json()) as { url: string }).url}`;
}

for (const size of SIZE_NAMES) {
  test(`a follower sees the whole larger terminal, scaled or scrolled as it chose, and Fit says it resizes for everyone (${size})`, async ({ browser, duet }) => {
    test.setTimeout(120_000);
    const page = await loginAt(browser, duet, size);
    try {
      const id = await apiCreate(page, duet, 'demo', BIG);
      await openId(page, duet, id);
      await expectTerminal(page, /demo/i);
      const pane = page.locator('.terminal-pane:not(.terminal-probe)');
      await expect(pane).toHaveAttribute('data-driver', 'false');
      // Scaled by default: every column and row is inside the pane.
      const scale = pane.getByRole('button', { name: 'Scale to fit' });
      await expect(scale).toHaveAttribute('aria-pressed', 'true');
      await expect.poll(async () => (await boxes(page)).scale).toBeDefined();
      const s = await boxes(page);
      expect(s.cols).toBe(BIG.cols);
      expect(s.term.right).toBeLessThanOrEqual(s.host.right + 1);
      expect(s.term.bottom).toBeLessThanOrEqual(s.host.bottom + 1);

      // Scroll: full size, and the right edge and the last row can be reached.
      await pane.getByRole('button', { name: 'Scroll', exact: true }).click();
      await expect(pane).toHaveAttribute('data-view', 'scroll');
      const host = pane.locator('.terminal-host');
      await expect.poll(() => host.evaluate((el) => el.scrollWidth > el.clientWidth && el.scrollHeight > el.clientHeight)).toBe(true);
      await host.evaluate((el) => { el.scrollTo(el.scrollWidth, el.scrollHeight); });
      const scrolled = await boxes(page);
      expect(scrolled.scale).toBeUndefined();
      expect(Math.abs(scrolled.term.right - scrolled.host.right)).toBeLessThanOrEqual(16);
      expect(Math.abs(scrolled.term.bottom - scrolled.host.bottom)).toBeLessThanOrEqual(16);
      // Remembered by this browser.
      await page.reload();
      await expect(page.locator('.terminal-pane:not(.terminal-probe)')).toHaveAttribute('data-view', 'scroll');

      // Fit says, on the button, that it resizes the terminal for everyone.
      const fit = page.locator('.term-fit');
      await expect(fit).toBeVisible();
      await expect(fit).toContainText('Fit to my window');
      await expect(fit).toContainText('resizes it for everyone');
      await expect(fit).toHaveAttribute('title', /for everyone who follows it/);
      await fit.click();
      await expect.poll(async () => ((await (await page.request.get(`${duet.baseURL}/api/sessions/${id}`)).json()) as { cols: number }).cols).toBeLessThan(BIG.cols);
      await expect(page.locator('.term-follow')).toBeHidden();
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });

  test(`a viewer gets the view but neither Fit nor the key bar, and its read-only note covers no control (${size})`, async ({ browser, duet }) => {
    test.setTimeout(120_000);
    const owner = await loginAt(browser, duet, 'desktop');
    const viewerCtx = await browser.newContext({ ...SIZES[size] });
    try {
      const id = await apiCreate(owner, duet, 'demo', BIG);
      const viewer = await viewerCtx.newPage();
      await viewer.goto(await shareLink(owner, duet, id, 'viewer'));
      await expect.poll(() => viewer.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
      const pane = viewer.locator('.terminal-pane:not(.terminal-probe)');
      await expect(pane).toHaveAttribute('data-may-drive', 'false');
      await expect(pane.getByRole('button', { name: 'Scale to fit' })).toBeVisible();
      await expect(viewer.locator('.term-fit')).toBeHidden();
      await expect(viewer.locator('.key-bar')).toBeHidden();
      // Typing: the note says it is read only; the terminal keeps its size.
      await pane.locator('.xterm').click();
      await viewer.keyboard.type('x');
      const note = viewer.locator('.keys-note');
      await expect(note).toBeVisible();
      const cols = await viewer.evaluate(() => window.duet?.screen()?.cols);
      expect(cols).toBe(BIG.cols);
      const noteBox = await note.boundingBox();
      for (const control of await pane.locator('.term-follow button:visible').all()) {
        const b = await control.boundingBox();
        if (!noteBox || !b) continue;
        const overlap = noteBox.x < b.x + b.width && b.x < noteBox.x + noteBox.width && noteBox.y < b.y + b.height && b.y < noteBox.y + noteBox.height;
        expect(overlap).toBe(false);
      }
    } finally {
      await endAll(owner, duet);
      await viewerCtx.close();
      await owner.context().close();
    }
  });
}
