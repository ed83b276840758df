// The replay at both sizes: a recording larger than the pane is shown whole
// (its last rows were cut, even scrolled), and the chat speaks as a
// replay's: no prompt box, and at 0:00 no "type a prompt below".
import { apiCreate, endAll, expect, loginAt, openId, sendChat, SIZE_NAMES, test } from './fixtures';

for (const size of SIZE_NAMES) {
  test(`a replay shows its whole terminal and speaks as a replay (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size);
    try {
      // Larger than either pane, in both directions.
      const id = await apiCreate(page, duet, 'demo', { cols: 200, rows: 80 });
      await openId(page, duet, id);
      await sendChat(page, 'hello replay');
      await expect(page.locator('.chat-log [data-kind=assistant]').last()).not.toBeEmpty();
      expect((await page.request.delete(`${duet.baseURL}/api/sessions/${id}`)).ok()).toBe(true);
      await page.goto(`${duet.baseURL}/#/session/${id}/replay`);
      const bar = page.getByRole('toolbar', { name: 'Replay' });
      await expect(bar.getByRole('status')).toContainText('Ended session');

      // The end: the whole screen, every row, inside the pane.
      await bar.getByRole('slider', { name: 'Replay position' }).focus();
      await page.keyboard.press('End');
      const fit = async (): Promise<boolean> => page.evaluate(() => {
        const host = document.querySelector('.replay-term-host')?.getBoundingClientRect();
        const term = document.querySelector('.replay-term-host .xterm-screen')?.getBoundingClientRect();
        if (!host || !term || term.width === 0) return false;
        return term.right <= host.right + 1 && term.bottom <= host.bottom + 1 && term.left >= host.left - 1 && term.top >= host.top - 1;
      });
      await expect.poll(fit).toBe(true);
      await expect(page.locator('.replay-chat [data-kind=exit]')).toBeVisible();

      // 0:00: nothing said yet, and nothing to type into.
      await page.keyboard.press('Home');
      const empty = page.locator('.replay-chat .chat-empty');
      await expect(empty).toHaveText('Nothing was said yet at this point of the recording.');
      await expect(page.locator('.replay-chat .composer')).toBeHidden();
      await expect(page.locator('.replay-chat').getByText(/type a prompt/i)).toHaveCount(0);
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
