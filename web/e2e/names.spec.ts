// Names a person can tell apart: each tab is its device ("Chrome on
// Android"), which its user can rename, remembered on that device (every
// tab read "owner (owner)"); each session is its first prompt, set by the
// server so every tab and the board see it, and an owner's name wins.
import { apiCreate, endAll, expect, loginAt, openId, sendChat, showSidebar, test } from './fixtures';

const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';

test('tabs are named by device (editable, remembered) and sessions by their first prompt', async ({ browser, duet }) => {
  test.setTimeout(120_000);
  const desk = await loginAt(browser, duet, 'desktop');
  const phone = await loginAt(browser, duet, 'phone', { userAgent: ANDROID });
  try {
    const id = await apiCreate(desk, duet, 'demo');
    await openId(desk, duet, id);
    await openId(phone, duet, id);
    const deskList = desk.getByRole('list', { name: 'Connected' });
    const phoneList = phone.getByRole('list', { name: 'Connected' });
    await expect(deskList).toContainText('Chrome on Android');
    await expect(deskList).toContainText('Chrome on Linux (you)');
    await expect(phoneList).toContainText('Chrome on Android (you)');
    await expect(deskList).not.toContainText('owner (owner)');

    // The phone's user names the phone; the desktop sees it; the phone remembers it.
    await phone.locator('.presence-rename').click();
    const input = phone.getByRole('textbox', { name: 'Name of this device, as others see it' });
    await expect(input).toHaveValue('Chrome on Android');
    await input.fill('Ana’s phone');
    await input.press('Enter');
    await expect(deskList).toContainText('Ana’s phone');
    await phone.reload();
    await expect(phone.getByRole('list', { name: 'Connected' })).toContainText('Ana’s phone (you)');

    // The first prompt names the session, in every tab and on the board.
    await sendChat(desk, 'fix the login bug please');
    await expect(desk.locator('.chat-log [data-kind=assistant]').last()).not.toBeEmpty();
    await expect(desk.locator('.session-title')).toContainText('fix the login bug please');
    await expect(desk.locator(`.session-row[data-session-id="${id}"] .session-name`)).toHaveText('fix the login bug please');
    await phone.goto(`${duet.baseURL}/#/board`);
    await expect(phone.locator(`.board-card[data-session-id="${id}"] .board-open`)).toHaveText('fix the login bug please');
    // An owner's name wins, and a later prompt does not undo it.
    await desk.request.patch(`${duet.baseURL}/api/sessions/${id}`, { data: { name: 'login' } });
    await sendChat(desk, 'and the tests');
    await expect(phone.locator(`.board-card[data-session-id="${id}"] .board-open`)).toHaveText('login');
    await showSidebar(desk);
    await expect(desk.locator(`.session-row[data-session-id="${id}"] .session-name`)).toHaveText('login');
    // A second session, unnamed, says what it was for, not "demo".
    const other = await apiCreate(desk, duet, 'demo');
    await openId(desk, duet, other);
    await sendChat(desk, 'write the release notes');
    await expect(desk.locator(`.session-row[data-session-id="${other}"] .session-name`)).toHaveText('write the release notes');
  } finally {
    await endAll(desk, duet);
    await phone.context().close();
    await desk.context().close();
  }
});
