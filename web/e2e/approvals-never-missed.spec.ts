// An approval is never missed: a pending approval is in view, or the
// "Approval waiting" control (and the status line's link) is, whether the
// reader follows the chat or scrolled up, through layout switches and height
// changes, at desktop and phone size. Screenshots go to
// test-results/screenshots/approval-*.png.
import type { Page } from '@playwright/test';
import { expect, sendChat, startSession, test } from './fixtures';
import { apiStart, DESKTOP, endSessions, login, PHONE, shot } from './helpers';

/** Where the first pending approval card is, relative to the chat log's view. */
async function approvalPlace(page: Page): Promise<'in' | 'out' | 'none'> {
  return page.evaluate(() => {
    const card = document.querySelector('.approval[data-approval-state]');
    const log = document.querySelector('.chat-log');
    if (!card || !log) return 'none';
    const r = card.getBoundingClientRect();
    const v = log.getBoundingClientRect();
    return r.top >= v.top - 1 && r.bottom <= v.bottom + 1 ? 'in' : 'out';
  });
}

/** The invariant: a pending approval is in view, or the "Approval waiting" control is. */
async function expectApprovalReachable(page: Page): Promise<void> {
  await expect.poll(async () => {
    const place = await approvalPlace(page);
    return place === 'in' || (place === 'out' && (await page.locator('.approval-jump').isVisible()));
  }).toBe(true);
}

async function fillChat(page: Page, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await sendChat(page, `filler message ${String(i)} — ${'so the conversation is taller than its pane. '.repeat(3)}`);
    await expect(page.locator('[data-kind=assistant]')).toHaveCount(i + 1);
  }
  await expect(page.getByRole('status')).toContainText('Idle');
}

for (const device of ['desktop', 'phone'] as const) {
  test(`an approval is never missed (${device})`, async ({ browser, duet }) => {
    test.setTimeout(180_000);
    const page = await login(browser, duet, device === 'desktop' ? { viewport: DESKTOP } : PHONE);
    try {
      await page.evaluate(() => { localStorage.setItem('duet.layout', 'chat'); });
      await page.reload();
      await (device === 'phone' ? apiStart(page, duet, 'demo') : startSession(page, 'demo'));
      await fillChat(page, device === 'desktop' ? 7 : 4);
      // Following: a new approval scrolls into view by itself.
      await sendChat(page, 'run echo followed');
      await expect(page.locator('.approval')).toBeVisible();
      await expect.poll(() => approvalPlace(page)).toBe('in');
      await expect(page.locator('.approval-jump')).toBeHidden();
      await page.screenshot({ path: shot(`approval-followed-${device}`) });
      await page.locator('.approval').getByRole('button', { name: 'Allow' }).click();
      await expect(page.getByRole('status')).toContainText('Idle');

      const vp = page.viewportSize() ?? DESKTOP;
      // Scrolled up: new content does not move the view, and a control jumps to the approval.
      await page.getByRole('button', { name: 'Chat', exact: true }).click();
      await page.locator('.chat-log').evaluate((el) => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); });
      await sendChat(page, 'run echo scrolled-up');
      await expect(page.locator('.approval')).toHaveCount(1);
      await expect.poll(() => approvalPlace(page)).toBe('out');
      await expect(page.locator('.approval-jump')).toBeVisible();
      await page.screenshot({ path: shot(`approval-jump-${device}`) });
      // Chat → Split and a height change: the control stays while the card is out of view.
      await page.getByRole('button', { name: 'Split', exact: true }).click();
      await expectApprovalReachable(page);
      await page.setViewportSize({ width: vp.width, height: Math.round(vp.height * 0.75) });
      await expectApprovalReachable(page);
      await page.setViewportSize(vp);
      await expectApprovalReachable(page);
      await page.screenshot({ path: shot(`approval-jump-split-${device}`) });
      if (await page.locator('.approval-jump').isVisible()) {
        await page.locator('.approval-jump').click();
        await expect.poll(() => approvalPlace(page)).toBe('in');
        await expect(page.locator('.approval-jump')).toBeHidden();
      }
      // The status line links to it too.
      await page.locator('.chat-log').evaluate((el) => { el.scrollTop = 0; el.dispatchEvent(new Event('scroll')); });
      await expect.poll(() => approvalPlace(page)).toBe('out');
      await page.getByRole('button', { name: 'Waiting for your approval' }).click();
      await expect.poll(() => approvalPlace(page)).toBe('in');
      await expect(page.locator('.approval')).toBeFocused();
      await page.screenshot({ path: shot(`approval-status-link-${device}`) });
      // Following (at the bottom): Chat → Split and height changes keep the approval in view.
      await page.getByRole('button', { name: 'Chat', exact: true }).click();
      await page.locator('.chat-log').evaluate((el) => { el.scrollTop = el.scrollHeight; el.dispatchEvent(new Event('scroll')); });
      await expect.poll(() => approvalPlace(page)).toBe('in');
      await page.getByRole('button', { name: 'Split', exact: true }).click();
      await expect.poll(() => approvalPlace(page)).toBe('in');
      await page.setViewportSize({ width: vp.width, height: Math.round(vp.height * 0.7) });
      await expect.poll(() => approvalPlace(page)).toBe('in');
      await page.setViewportSize(vp);
      await expect.poll(() => approvalPlace(page)).toBe('in');
      await page.screenshot({ path: shot(`approval-followed-split-${device}`) });
    } finally {
      await endSessions(page, duet);
      await page.context().close();
    }
  });
}
