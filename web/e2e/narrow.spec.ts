// Phones in portrait: the page never scrolls sideways, every control of
// the top bar, the composer, the key bar and an approval card is on screen,
// and a new session starts at the phone's terminal size.
import { expect, sendChat, startSession, test, waitGreeted } from './fixtures';

for (const width of [360, 375]) {
  test.describe(`${String(width)} px`, () => {
    test.use({ viewport: { width, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });

    test('nothing sticks out sideways, with an approval showing', async ({ loggedIn: page }) => {
      await page.getByRole('button', { name: 'Start demo' }).click();
      await waitGreeted(page);
      await sendChat(page, 'run echo narrow');
      const card = page.locator('[data-kind=tool]').last();
      await expect(card.getByRole('button', { name: 'Allow' })).toBeVisible();
      // A phone's browser widens the layout to the content (innerWidth grew to 377 at 360).
      const sizes = await page.evaluate(() => ({ inner: innerWidth, scroll: document.scrollingElement?.scrollWidth ?? 1e9 }));
      expect(sizes.inner).toBe(width);
      expect(sizes.scroll).toBeLessThanOrEqual(width);
      const controls = [
        page.getByRole('button', { name: /^Switch to the (dark|light) theme$/ }),
        page.getByRole('button', { name: 'Send' }),
        page.getByRole('toolbar', { name: 'Terminal keys' }).getByRole('button', { name: 'Enter' }),
        card,
        card.getByRole('button', { name: 'Deny' }),
      ];
      for (const c of controls) {
        const box = await c.boundingBox();
        expect(box, `${c.toString()} is laid out`).not.toBeNull();
        expect((box?.x ?? 0) + (box?.width ?? 1e9), `${c.toString()} ends inside the screen`).toBeLessThanOrEqual(width);
      }
    });
  });
}

test.describe('390 px phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true });

  // The program draws its first screen (the demo's banner, a shell's prompt)
  // before the pane's first `resize`: it must start at the pane's size, not
  // the server's 120×36, or the phone shows that screen cut at 40-odd columns.
  for (const profile of ['demo', 'shell']) {
    test(`a new ${profile} session starts at the phone's terminal size`, async ({ loggedIn: page, duet }) => {
      const id = await startSession(page, profile);
      // The recording: its header is the PTY's size when the program started,
      // then a `[t, "r", "COLSxROWS"]` line per resize.
      const cast = async (): Promise<string[]> => (await (await page.request.get(`${duet.baseURL}/api/sessions/${encodeURIComponent(id)}/recording`)).text()).split('\n');
      const header = JSON.parse((await cast())[0] ?? '{}') as { width?: number; height?: number };
      expect(header.width).toBeLessThan(60);
      // It is the size the pane fits to, which the program never had to change.
      await expect.poll(() => page.evaluate(() => { const s = window.duet?.screen(); return { cols: s?.cols, rows: s?.rows }; })).toEqual({ cols: header.width, rows: header.height });
      expect((await cast()).filter((l) => l.includes('"r"'))).toEqual([]);
    });
  }
});
