// The board at both sizes: it fills the workspace whatever layout the
// session view had (on a phone in Split it had the top 57 %, the fourth
// card cut and the rest blank), every card can be reached, and renaming
// from a card edits that card, not the sidebar.
import { apiCreate, endAll, expect, loginAt, SIZE_NAMES, test } from './fixtures';

for (const size of SIZE_NAMES) {
  test(`the board fills the workspace and renames in its card (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size);
    try {
      await page.evaluate(() => { localStorage.setItem('duet.layout', 'split'); });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await apiCreate(page, duet, 'demo'));
      await page.goto(`${duet.baseURL}/#/board`);
      await expect(page.locator('.board-card')).toHaveCount(4);
      const fill = await page.evaluate(() => {
        const ws = document.querySelector('.workspace')?.getBoundingClientRect();
        const board = document.querySelector('.board-view')?.getBoundingClientRect();
        return { ws: ws?.height ?? 0, board: board?.height ?? 0, bottom: board?.bottom ?? 0, viewport: window.innerHeight };
      });
      expect(fill.board).toBeGreaterThanOrEqual(fill.ws - 1);
      expect(fill.bottom).toBeGreaterThanOrEqual(fill.viewport - 2);
      // The last card can be scrolled to and is whole.
      const last = page.locator('.board-card').last();
      await last.scrollIntoViewIfNeeded();
      await expect(last).toBeInViewport({ ratio: 1 });

      // Rename from a card: the form opens in that card.
      const card = page.locator(`.board-card[data-session-id="${ids[0] ?? ''}"]`);
      await card.locator('.board-rename').click();
      const input = card.locator('.rename-input');
      await expect(input).toBeFocused();
      await expect(page.locator('.sidebar .rename-form')).toHaveCount(0);
      await input.fill('from the board');
      await input.press('Enter');
      await expect(card.locator('.board-open')).toHaveText('from the board');
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
