// The sidebar: a drawer below 1024 px, so the terminal keeps its room; a
// column on wider screens that the ☰ hides and shows again, remembered.
import { expect, sendChat, startSession, test, waitGreeted } from './fixtures';

test.describe('at 800 px', () => {
  test.use({ viewport: { width: 800, height: 1000 } });

  test('the sidebar is a drawer, and the terminal gets the room', async ({ loggedIn: page }) => {
    const menu = page.getByRole('button', { name: 'Sessions' });
    const sidebar = page.getByRole('navigation', { name: 'Sessions' });
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(sidebar).toBeHidden();
    await startSession(page, 'demo');
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(sidebar).toBeHidden();
    // Split: the terminal had 22 columns beside a 260 px sidebar.
    await expect(page.getByRole('button', { name: 'Split', exact: true })).toHaveAttribute('aria-pressed', 'true');
    expect((await page.locator('.workspace').boundingBox())?.width).toBe(800);
    await expect.poll(() => page.evaluate(() => window.duet?.screen()?.cols ?? 0)).toBeGreaterThanOrEqual(50);

    await menu.click();
    await expect(menu).toHaveAttribute('aria-expanded', 'true');
    await expect(sidebar).toBeVisible();
    await page.locator('.scrim').click({ position: { x: 700, y: 500 } });
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(sidebar).toBeHidden();
  });
});

test('on a wide screen the ☰ hides the sidebar column and shows it again, remembered', async ({ loggedIn: page }) => {
  const menu = page.getByRole('button', { name: 'Sessions' });
  const sidebar = page.getByRole('navigation', { name: 'Sessions' });
  await startSession(page, 'demo');
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await expect(sidebar).toBeVisible();
  const cols = await page.evaluate(() => window.duet?.screen()?.cols ?? 0);

  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(sidebar).toBeHidden();
  expect((await page.locator('.workspace').boundingBox())?.x).toBe(0);
  // The terminal takes the column's room.
  await expect.poll(() => page.evaluate(() => window.duet?.screen()?.cols ?? 0)).toBeGreaterThan(cols);

  await page.reload();
  await waitGreeted(page);
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(sidebar).toBeHidden();

  await menu.click();
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await expect(sidebar).toBeVisible();
  expect(await page.evaluate(() => localStorage.getItem('duet.sidebar'))).toBeNull();
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });

  test('the drawer closes when the board is chosen, and on Escape', async ({ loggedIn: page }) => {
    const menu = page.getByRole('button', { name: 'Sessions' });
    const sidebar = page.getByRole('navigation', { name: 'Sessions' });
    const id = await startSession(page, 'demo');
    await expect(menu).toHaveAttribute('aria-expanded', 'false');

    await menu.click();
    await expect(sidebar).toBeVisible();
    await sidebar.getByRole('link', { name: 'Board' }).click();
    await expect(page).toHaveURL(/#\/board$/);
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(sidebar).toBeHidden();
    await expect(page.locator('.scrim')).toBeHidden();
    // Nothing covers the board: its cards take the tap.
    await page.locator(`.board-card[data-session-id="${id}"] .board-open`).click();
    await expect(page).toHaveURL(new RegExp(`#/session/${id}$`));

    await menu.click();
    await expect(sidebar).toBeVisible();
    await sidebar.getByRole('link', { name: 'Board' }).focus();
    await page.keyboard.press('Escape');
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(sidebar).toBeHidden();
    await expect(menu).toBeFocused();
  });

  test('the ☰ counts approvals waiting in the other sessions', async ({ loggedIn: page }) => {
    const menu = page.locator('.topbar .menu');
    const first = await startSession(page, 'demo');
    await sendChat(page, 'run echo waiting-in-the-first');
    await expect(page.locator('[data-kind=tool]').last().getByRole('button', { name: 'Allow' })).toBeVisible();
    // Its own approval is on screen: no count.
    await expect(menu).toHaveAccessibleName('Sessions');
    await expect(menu.locator('.menu-badge')).toBeHidden();

    await startSession(page, 'demo');
    await expect(menu).toHaveAccessibleName('Sessions: 1 approval waiting in another session');
    await expect(menu.locator('.menu-badge')).toHaveText('1');
    await expect(menu.locator('.menu-badge')).toBeVisible();

    // Back in the first session: nothing waits elsewhere.
    await menu.click();
    await page.locator(`.session-row[data-session-id="${first}"] .session-open`).click();
    await expect(page).toHaveURL(new RegExp(`#/session/${first}$`));
    await expect(menu).toHaveAccessibleName('Sessions');
    await expect(menu.locator('.menu-badge')).toBeHidden();
  });
});
