// The keyboard: panels close on Escape, and the terminal, which takes Tab and
// Escape for the program, has a documented key that leads out of it.
import { expect, test } from './fixtures';

test('Escape closes the notifications panel and gives the bell the focus', async ({ loggedIn: page }) => {
  const bell = page.getByRole('button', { name: 'Notifications', exact: true });
  const panel = page.getByRole('dialog', { name: 'Notifications' });
  await bell.click();
  await expect(panel).toBeVisible();
  await expect(bell).toHaveAttribute('aria-expanded', 'true');
  // From a control in the panel.
  await panel.getByRole('spinbutton').focus();
  await page.keyboard.press('Escape');
  await expect(panel).toBeHidden();
  await expect(bell).toHaveAttribute('aria-expanded', 'false');
  await expect(bell).toBeFocused();
  // From the bell itself.
  await page.keyboard.press('Enter');
  await expect(panel).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(panel).toBeHidden();
});
