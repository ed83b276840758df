// The notifications panel: once on, it can be turned off again on this
// device (a page cannot take back the browser's permission, so duet keeps
// its own switch, and a hidden tab then posts nothing); its sentences say
// what they do ("Notify when a turn finishes after more than 30 s"); each
// checkbox sits beside its words.
import { apiCreate, endAll, expect, loginAt, SIZE_NAMES, test } from './fixtures';
import { hide, spy } from './sw-spy';

for (const size of SIZE_NAMES) {
  test(`notifications can be turned off and on again; the panel reads right (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size, { permissions: ['notifications'] });
    const context = page.context();
    try {
      await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state)).toBe('activated');
      const sw = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
      await spy(sw);
      // What each `notify` message asked to show (its bodies), in order.
      await sw.evaluate(() => {
        const g = self as unknown as { __bodies: string[]; addEventListener(t: string, f: (e: MessageEvent<{ type?: string; items?: { body?: string }[] }>) => void): void };
        g.__bodies = [];
        g.addEventListener('message', (e) => { if (e.data.type === 'notify') g.__bodies.push(...(e.data.items ?? []).map((i) => i.body ?? '')); });
      });
      const bodies = (): Promise<string[]> => sw.evaluate(() => (self as unknown as { __bodies: string[] }).__bodies);
      const bell = page.getByRole('button', { name: 'Notifications' });
      await bell.click();
      const panel = page.getByRole('dialog', { name: 'Notifications' });
      await expect(panel.getByRole('status').first()).toContainText('On:');
      await expect(panel).toContainText('Notify when a turn finishes after more than');
      await expect(panel.getByRole('spinbutton', { name: /Notify when a turn finishes/ })).toHaveValue('30');

      // The push box and its words on one line, the box first.
      const box = await panel.locator('.push-enable').boundingBox();
      const words = await panel.getByText('Push to this device').boundingBox();
      expect(box && words).toBeTruthy();
      if (box && words) {
        expect(box.x + box.width).toBeLessThanOrEqual(words.x);
        expect(Math.abs(box.y - words.y)).toBeLessThan(words.height);
      }

      await panel.getByRole('button', { name: 'Turn off notifications' }).click();
      await expect(panel.getByRole('status').first()).toHaveText('Off on this device.');
      await expect(panel.getByRole('button', { name: 'Turn on notifications' })).toBeVisible();
      // Remembered on this device.
      await page.reload();
      await page.getByRole('button', { name: 'Notifications' }).click();
      await expect(page.getByRole('dialog', { name: 'Notifications' }).getByRole('status').first()).toHaveText('Off on this device.');

      // Off: a hidden tab posts nothing for an approval. On again: the next one is posted.
      const id = await apiCreate(page, duet, 'demo');
      await page.goto(`${duet.baseURL}/#/board`);
      await expect(page.locator(`.board-card[data-session-id="${id}"] [data-state=idle]`)).toBeVisible();
      await hide(page);
      await page.request.post(`${duet.baseURL}/api/sessions/${id}/submit`, { data: { text: 'run echo while-off' } });
      await expect(page.locator(`.board-card[data-session-id="${id}"] .board-approval`)).toHaveCount(1);
      const pending = (await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/approvals`)).json()) as { request_id: string; state: string }[];
      await page.request.post(`${duet.baseURL}/api/sessions/${id}/approvals/${pending.find((a) => a.state === 'pending')?.request_id ?? ''}`, { data: { allowed: false } });
      await expect(page.locator(`.board-card[data-session-id="${id}"] .board-approval`)).toHaveCount(0);
      await page.evaluate(() => { localStorage.removeItem('duet.notify.off'); });
      await page.request.post(`${duet.baseURL}/api/sessions/${id}/submit`, { data: { text: 'run echo while-on' } });
      // Messages from a tab arrive in order: once the second is in, the first would be too.
      await expect.poll(() => bodies()).toContain('echo while-on');
      expect(await bodies()).not.toContain('echo while-off');
    } finally {
      await endAll(page, duet);
      await context.close();
    }
  });
}
