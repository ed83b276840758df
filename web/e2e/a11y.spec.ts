// axe-core over the session view (chat and terminal, with an approval
// waiting and the follower's controls shown) and the board, in the light and
// the dark theme, at desktop and phone size: no serious or critical
// violation. The terminal is checked whole for every rule but colour
// contrast of its cells, which are the program's own colours (xterm raises
// them to 4.5:1 with minimumContrastRatio; that is checked elsewhere).
import { createRequire } from 'node:module';
import type { Page } from '@playwright/test';
import { apiCreate, endAll, expect, loginAt, openId, sendChat, SIZE_NAMES, test } from './fixtures';

const require = createRequire(import.meta.url);

interface AxeResult { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }

/** Serious and critical violations on the page as it is now. */
async function violations(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: object, opts: object) => Promise<AxeResult> } }).axe;
    const bad = (r: AxeResult): string[] => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 4).join(', ')}`);
    const page = await axe.run({ include: [document], exclude: [['.terminal-host .xterm-rows']] }, { resultTypes: ['violations'] });
    // The cells themselves: every rule but colour contrast.
    const rows = document.querySelector('.terminal-host .xterm-rows');
    const cells = rows ? await axe.run({ include: [rows] }, { resultTypes: ['violations'], rules: { 'color-contrast': { enabled: false } } }) : { violations: [] };
    return [...bad(page), ...bad(cells)];
  });
}

for (const size of SIZE_NAMES) {
  test(`no serious or critical axe violation on the session view and the board (${size})`, async ({ browser, duet }) => {
    test.setTimeout(180_000);
    // bypassCSP: the page's CSP (script-src 'self') would refuse the injected axe-core.
    const page = await loginAt(browser, duet, size, { bypassCSP: true });
    try {
      // Larger than the pane: the follower's view controls and Fit are on screen too.
      const id = await apiCreate(page, duet, 'demo', { cols: 220, rows: 70 });
      await openId(page, duet, id);
      await expect(page.locator('.term-follow')).toBeVisible();
      await sendChat(page, 'edit notes.txt');
      await expect(page.locator('.approval')).toBeVisible();
      // The terminal has the keyboard: its ring and its hint are checked as well.
      await page.locator('.terminal-pane:not(.terminal-probe) .xterm-helper-textarea').focus();
      await expect(page.locator('.term-leave-hint')).toBeVisible();
      const found: string[] = [];
      for (const view of ['session', 'board'] as const) {
        if (view === 'board') await page.goto(`${duet.baseURL}/#/board`);
        await expect(page.locator(view === 'board' ? '.board-card' : '.chat-log [data-kind]').first()).toBeVisible();
        await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
        for (const scheme of ['light', 'dark'] as const) {
          if ((await page.locator('html').getAttribute('data-theme')) !== scheme) await page.locator('.theme-toggle').click();
          await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
          found.push(...(await violations(page)).map((v) => `${view}/${scheme}: ${v}`));
        }
      }
      expect(found).toEqual([]);
    } finally {
      await endAll(page, duet);
      await page.context().close();
    }
  });
}
