// The Share dialog: a link shown once stays in its field only while it
// works; revoking it clears the field (it kept the dead link to copy).
import { apiCreate, endAll, expect, loginAt, openId, SIZE_NAMES, test } from './fixtures';

for (const size of SIZE_NAMES) {
  test(`revoking the link in the field clears it (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size, { permissions: ['clipboard-read', 'clipboard-write'] });
    try {
      const id = await apiCreate(page, duet, 'demo');
      await openId(page, duet, id);
      await page.getByRole('button', { name: 'Share' }).click();
      const dialog = page.getByRole('dialog', { name: 'Share this session' });
      await dialog.getByRole('button', { name: 'Create link' }).click();
      const field = dialog.getByRole('textbox', { name: 'Share link' });
      await expect(field).toHaveValue(/\?share=/);
      await expect(dialog.locator('.share-item')).toHaveCount(1);
      await dialog.getByRole('button', { name: 'Revoke' }).click();
      await expect(dialog.getByRole('status')).toContainText('Link revoked');
      await expect(field).toHaveValue('');
      await expect(dialog.locator('.share-none')).toHaveText('No links.');
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
