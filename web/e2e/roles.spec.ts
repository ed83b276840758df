// Roles: an owner shares a viewer link from the UI; the viewer's tab sees the
// terminal and the chat, but no prompt box, and its keys do not reach the
// program.
import { expect, expectTerminal, sendChat, startSession, terminalText, test, typeInTerminal, waitGreeted } from './fixtures';

test('an owner shares a viewer link: the viewer sees the session but cannot type', async ({ loggedIn: page, browser, duet }) => {
  const id = await startSession(page, 'demo');
  await sendChat(page, 'before the viewer came');
  await expect(page.locator('.chat-log [data-kind=assistant]').last()).toContainText('You said “before the viewer came”');

  // The owner creates a viewer link in the Share dialog.
  await page.getByRole('button', { name: 'Share' }).click();
  const dialog = page.locator('.share-dialog');
  await expect(dialog).toBeVisible();
  await dialog.locator('.share-role').selectOption('viewer');
  await dialog.getByRole('button', { name: 'Create link' }).click();
  const link = dialog.locator('.share-link');
  await expect(link).toHaveValue(/\?share=[0-9a-f]{64}$/);
  const url = await link.inputValue();
  await expect(dialog.locator('.share-item')).toHaveCount(1);
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Another browser (no owner cookie) opens it.
  const ctx = await browser.newContext();
  const viewer = await ctx.newPage();
  // The tab learns it runs on a share link from GET /api/me, not from a
  // refused request (a red line in every share guest's console).
  const refused: string[] = [];
  viewer.on('response', (r) => { if (r.status() === 403) refused.push(r.url()); });
  await viewer.goto(url);
  await expect(viewer).toHaveURL(`${duet.baseURL}/#/session/${id}`);
  await waitGreeted(viewer);
  // It sees the terminal and the chat...
  await expect.poll(() => terminalText(viewer)).toMatch(/before the viewer came/);
  await expect(viewer.locator('.chat-log [data-kind=user]', { hasText: 'before the viewer came' })).toHaveCount(1);
  // ...but no prompt box, no Share, and it is listed as a viewer.
  await expect(viewer.getByRole('textbox', { name: 'Message' })).toBeHidden();
  await expect(viewer.getByRole('button', { name: 'Share', exact: true })).toBeHidden();
  await expect(viewer.locator('.presence-item', { hasText: 'viewer' })).toHaveCount(1);
  expect(refused).toEqual([]);
  // The owner sees the viewer connect, and the dialog names its link as
  // the presence bar names the guest ("share:<id>").
  const guest = page.locator('.presence-item[data-role=viewer]');
  await expect(guest).toHaveCount(1);
  // Named by its device, then its principal (a share link's "share:<id>") and role.
  const principal = /(share:\S+) \(viewer\)$/.exec(await guest.innerText())?.[1];
  expect(principal).toMatch(/^share:\S+$/);
  await page.getByRole('button', { name: 'Share' }).click();
  await expect(dialog.locator('.share-item')).toContainText(principal ?? 'no principal');
  await dialog.getByRole('button', { name: 'Close' }).click();

  // Its keys are ignored, with a note.
  await typeInTerminal(viewer, 'typed by the viewer');
  await viewer.keyboard.press('Enter');
  await expect(viewer.locator('.keys-note')).toBeVisible();
  // The owner's next prompt shows up in both tabs; the viewer's text never does.
  await typeInTerminal(page, 'typed by the owner');
  await page.keyboard.press('Enter');
  await expect(page.locator('.chat-log [data-kind=user]', { hasText: 'typed by the owner' })).toHaveCount(1);
  await expectTerminal(viewer, /typed by the owner/);
  expect(await terminalText(page)).not.toContain('typed by the viewer');
  await expect(viewer.locator('.chat-log [data-kind=user]', { hasText: 'typed by the viewer' })).toHaveCount(0);

  // The note does not stay over the terminal's bottom rows.
  await expect(viewer.locator('.keys-note')).toBeHidden({ timeout: 10_000 });

  // Ending the session is the owner's: the viewer has no End button.
  await expect(page.locator(`.session-row[data-session-id="${id}"] .session-end`)).toHaveCount(1);
  await expect(viewer.locator('.session-end')).toHaveCount(0);
  // A pending approval waits on the owner, not on the viewer.
  await sendChat(page, 'run ls -la');
  await expect(page.locator('.chat-status .status-jump')).toHaveText('Waiting for your approval');
  await expect(viewer.locator('.chat-status .status-jump')).toHaveText('Waiting for an approval');
  await page.locator('[data-kind=tool]').last().getByRole('button', { name: 'Allow' }).click();
  await expect(viewer.locator('.chat-status .status-jump')).toBeHidden();

  // Revoking disconnects it, and its tab says the link ended (it has no
  // token to paste into the owner's sign-in form), also after a reload.
  await page.getByRole('button', { name: 'Share' }).click();
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await expect(dialog.locator('.share-item')).toHaveCount(0);
  await expect(page.locator('.presence-item[data-role=viewer]')).toHaveCount(0);
  await expect(viewer.locator('.share-ended')).toContainText('This share link has ended');
  await expect(viewer.locator('#token')).toHaveCount(0);
  await viewer.reload();
  await expect(viewer.locator('.share-ended')).toContainText('This share link has ended');
  await expect(viewer.locator('#token')).toHaveCount(0);
  await ctx.close();
});
