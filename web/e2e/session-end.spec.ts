// Ending a session yourself is no error: "Ended by you", in neutral colours
// (it read as a red "exited with code 143"); a program that fails is red.
// An ended session offers to delete its transcript (not to end it again),
// and a confirmation stays until it is answered or dismissed (it went after
// 3 s, before it could be read).
import type { Page } from '@playwright/test';
import { apiCreate, endAll, expect, expectTerminal, hideSidebar, loginAt, openId, showSidebar, SIZE_NAMES, test } from './fixtures';

/** The computed colour of `selector`'s text. */
const colour = (page: Page, selector: string): Promise<string> => page.locator(selector).first().evaluate((el) => getComputedStyle(el).color);
/** The page's error colour, as computed. */
const errColour = (page: Page): Promise<string> => page.evaluate(() => {
  const probe = document.createElement('span');
  probe.style.color = 'var(--err)';
  document.body.append(probe);
  const c = getComputedStyle(probe).color;
  probe.remove();
  return c;
});

for (const size of SIZE_NAMES) {
  test(`an end you asked for is neutral, a crash is red, and an ended session offers Delete transcript (${size})`, async ({ browser, duet }) => {
    test.setTimeout(120_000);
    const page = await loginAt(browser, duet, size);
    // Time is the test's: the confirmation must outlive the old 3 s.
    await page.clock.install();
    await page.reload();
    try {
      const id = await apiCreate(page, duet, 'demo');
      await openId(page, duet, id);
      await expect(page.getByRole('status').first()).toContainText('Idle');

      // End it from the sidebar: End?, which stays, then the end.
      await showSidebar(page);
      const row = page.locator(`.session-row[data-session-id="${id}"]`);
      await row.getByRole('button', { name: /^End session/ }).click();
      const confirm = row.getByRole('button', { name: /^Confirm: end session/ });
      await expect(confirm).toHaveText('End?');
      await page.clock.fastForward(10_000);
      await expect(confirm).toBeVisible();
      await confirm.click();
      await hideSidebar(page);

      const note = page.locator('.chat-log [data-kind=exit]');
      await expect(note).toHaveText('Ended by you.');
      await expect(note).toHaveClass(/\bis-ended\b/);
      await expect(page.locator('.chat-status')).toContainText('Ended by you');
      await expect(page.locator('.term-banner')).toHaveAttribute('data-tone', 'ended');
      const err = await errColour(page);
      expect(await colour(page, '.chat-log [data-kind=exit]')).not.toBe(err);
      expect(await colour(page, '.term-banner .term-banner-text')).not.toBe(err);

      // Ended: the row offers to delete the transcript, and asks first.
      await showSidebar(page);
      await expect(row.getByRole('button', { name: /^End session/ })).toHaveCount(0);
      const del = row.getByRole('button', { name: /^Delete the transcript of session/ });
      await del.click();
      const sure = row.getByRole('button', { name: /^Confirm: delete the transcript/ });
      await expect(sure).toHaveText('Delete?');
      // Escape takes the question back.
      await page.keyboard.press('Escape');
      await expect(sure).toHaveCount(0);
      await showSidebar(page);
      await del.click();
      await page.clock.fastForward(10_000);
      await sure.click();
      await expect(row).toHaveCount(0);
      expect((await page.request.get(`${duet.baseURL}/api/sessions/${id}`)).status()).toBe(404);

      await hideSidebar(page);
      // A program that fails: red, with its code.
      const shell = await apiCreate(page, duet, 'shell');
      await openId(page, duet, shell);
      await expectTerminal(page, /[#$] ?$/m);
      await page.locator('.terminal-pane:not(.terminal-probe) .xterm').click();
      await page.keyboard.type('exit 3');
      await page.keyboard.press('Enter');
      const banner = page.locator('.term-banner');
      await expect(banner).toHaveAttribute('data-tone', 'error');
      await expect(banner.locator('.term-banner-text')).toHaveText('The program exited with code 3.');
      expect(await colour(page, '.term-banner .term-banner-text')).toBe(err);
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
