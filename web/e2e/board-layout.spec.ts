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
      // Other tests' ended sessions may be listed too (the server is shared): these four are.
      for (const id of ids) await expect(page.locator(`.board-card[data-session-id="${id}"]`)).toHaveCount(1);
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
      // A long name (sessions are named by their first prompt) is cut, and pushes nothing out of its card.
      await page.request.patch(`${duet.baseURL}/api/sessions/${ids[1] ?? ''}`, { data: { name: 'a rather long first prompt that goes on and on about the login bug and its tests' } });
      const long = page.locator(`.board-card[data-session-id="${ids[1] ?? ''}"]`);
      await expect(long.locator('.board-open')).toContainText('a rather long first prompt');
      const inside = await long.evaluate((el) => {
        const c = el.getBoundingClientRect();
        return [...el.querySelectorAll('.board-card-head > *')].every((x) => { const r = x.getBoundingClientRect(); return r.left >= c.left - 1 && r.right <= c.right + 1; });
      });
      expect(inside).toBe(true);
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
