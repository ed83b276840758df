// The sidebar: a drawer below 1024 px, so the terminal keeps its room; a
// column on wider screens that the ☰ hides and shows again, remembered.
import { expect, startSession, test, waitGreeted } from './fixtures';

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
