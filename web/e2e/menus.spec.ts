// The Export menu closes as menus do: a click or tap outside, Escape (the
// keyboard back on its button), another session, and opening Share.
import type { Page } from '@playwright/test';
import { apiCreate, endAll, expect, loginAt, openId, SIZE_NAMES, test } from './fixtures';

async function openExport(page: Page): Promise<void> {
  await page.locator('.export-menu > summary').click();
  await expect(page.locator('.export-list')).toBeVisible();
}

for (const size of SIZE_NAMES) {
  test(`the Export menu closes on a click outside, Escape, a session switch and Share (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size);
    try {
      const first = await apiCreate(page, duet, 'demo');
      const second = await apiCreate(page, duet, 'demo');
      await openId(page, duet, first);
      const list = page.locator('.export-list');

      await openExport(page);
      await page.locator('.chat-log').click({ position: { x: 10, y: 10 } });
      await expect(list).toBeHidden();

      await openExport(page);
      await page.keyboard.press('Escape');
      await expect(list).toBeHidden();
      await expect(page.locator('.export-menu > summary')).toBeFocused();

      await openExport(page);
      await page.evaluate((id) => { location.hash = `#/session/${id}`; }, second);
      await expect.poll(() => page.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
      await expect(list).toBeHidden();

      // Share, by keyboard (the open menu lies over the presence bar's Share).
      await openExport(page);
      await page.getByRole('button', { name: 'Share' }).focus();
      await page.keyboard.press('Enter');
      await expect(page.getByRole('dialog', { name: 'Share this session' })).toBeVisible();
      await expect(list).toBeHidden();
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
