// The top bar: on a phone every control is a touch target of at least
// 44 px (they were 32); the count of approvals waiting elsewhere, on the ☰,
// covers nothing next to it (it overlapped the title).
import { apiCreate, endAll, expect, loginAt, openId, SIZE_NAMES, test } from './fixtures';

for (const size of SIZE_NAMES) {
  test(`top bar targets and the approvals badge (${size})`, async ({ browser, duet }) => {
    test.setTimeout(90_000);
    const page = await loginAt(browser, duet, size);
    try {
      const waiting = await apiCreate(page, duet, 'demo');
      const open = await apiCreate(page, duet, 'demo');
      await openId(page, duet, waiting);
      await expect(page.getByRole('status').first()).toContainText('Idle');
      await page.request.post(`${duet.baseURL}/api/sessions/${waiting}/submit`, { data: { text: 'run echo waiting' } });
      await expect(page.locator('.approval[data-approval-state=pending]')).toBeVisible();
      await openId(page, duet, open);
      const badge = page.locator('.menu-badge');
      await expect(badge).toHaveText('1');
      const b = await badge.boundingBox();
      // Whatever follows the ☰ in the bar (the title on a desktop; on a phone the layout switch).
      const next = await page.locator('.topbar > :visible').evaluateAll((els) => {
        // The first drawn item after the ☰ (on a phone the name is there for screen readers only, 1 px).
        const r = els.slice(1).map((e) => e.getBoundingClientRect()).find((x) => x.width > 2 && x.height > 2);
        return r ? { x: r.x, y: r.y, width: r.width, height: r.height } : null;
      });
      expect(b && next).toBeTruthy();
      if (b && next) expect(b.x + b.width).toBeLessThanOrEqual(next.x);

      if (size === 'phone') {
        const heights = await page.locator('.topbar button:visible, .topbar summary:visible, .topbar a:visible').evaluateAll((els) =>
          els.map((e) => ({ what: e.getAttribute('aria-label') ?? e.textContent.trim(), h: e.getBoundingClientRect().height })));
        expect(heights.length).toBeGreaterThan(3);
        for (const x of heights) expect(x.h, x.what).toBeGreaterThanOrEqual(44);
        // And still nothing to scroll sideways.
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      }
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
