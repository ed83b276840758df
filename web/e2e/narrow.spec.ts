// Phones in portrait: the page never scrolls sideways, and every control of
// the top bar, the composer, the key bar and an approval card is on screen.
import { expect, sendChat, test, waitGreeted } from './fixtures';

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
