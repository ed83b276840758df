// Screenshots of the main views, for people to look at (test-results/screenshots/).
import { join } from 'node:path';
import { expect, sendChat, screenshotDir, startSession, test } from './fixtures';

test('main views', async ({ loggedIn: page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await startSession(page, 'demo');
  await sendChat(page, 'Hello! What can you do?');
  await expect(page.getByRole('status')).toContainText('Idle');
  await sendChat(page, 'run ls -la');
  await page.locator('[data-kind=tool]').last().getByRole('button', { name: 'Allow' }).click();
  await expect(page.getByRole('status')).toContainText('Idle');
  await sendChat(page, 'edit notes.txt');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card.getByRole('button', { name: 'Allow' })).toBeVisible();

  await page.screenshot({ path: join(screenshotDir, 'split-dark.png') });
  await card.screenshot({ path: join(screenshotDir, 'approval-card-dark.png') });

  await page.getByRole('button', { name: /Switch to the light theme/ }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.screenshot({ path: join(screenshotDir, 'split-light.png') });
  await card.screenshot({ path: join(screenshotDir, 'approval-card-light.png') });

  await page.getByRole('button', { name: 'Chat', exact: true }).click();
  await page.screenshot({ path: join(screenshotDir, 'chat-only-light.png') });
  await page.getByRole('button', { name: 'Terminal', exact: true }).click();
  await page.screenshot({ path: join(screenshotDir, 'terminal-only-light.png') });
  await page.getByRole('button', { name: 'Split', exact: true }).click();

  // A phone: chat first, stacked, big approval buttons.
  await page.getByRole('button', { name: /Switch to the dark theme/ }).click();
  await page.setViewportSize({ width: 390, height: 844 });
  await card.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'narrow-dark.png') });
  const allow = card.getByRole('button', { name: 'Allow' });
  const box = await allow.boundingBox();
  expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  await page.getByRole('button', { name: 'Sessions' }).click();
  // The drawer slides in; shoot once it is all the way in.
  await expect.poll(async () => (await page.locator('#sidebar').boundingBox())?.x).toBe(0);
  await page.screenshot({ path: join(screenshotDir, 'narrow-sidebar.png') });
});
