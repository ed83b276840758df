// Accessibility with the terminal's cells included: no serious or critical axe
// violation in any layout and theme at desktop and phone size, and dim
// terminal text of every kind of colour at 4.5:1 in both themes (a11y.spec.ts
// checks the rest of the UI). Screenshots: test-results/screenshots/axe-*.png and dim-*.png.
import { createRequire } from 'node:module';
import type { Page } from '@playwright/test';
import { expect, expectTerminal, sendChat, startSession, test, typeInTerminal } from './fixtures';
import { apiStart, DESKTOP, endSessions, login, PHONE, shellReady, shot } from './helpers';

const require = createRequire(import.meta.url);

/** Runs axe on `context` of the page (null: all of it; axe-core injected); the serious and critical violations. */
async function axeViolations(page: Page, context: object | null, options: object = {}): Promise<string[]> {
  return page.evaluate(async ([ctx, opts]) => {
    const axe = (window as unknown as { axe: { run: (ctx: object, opts: object) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[]; any: { message: string }[] }[] }[] }> } }).axe;
    const r = await axe.run(ctx ?? document, { ...opts, resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => `${n.target.join(' ')} ${n.any.map((a) => a.message).join(' ')}`).slice(0, 4).join(', ')}`);
  }, [context, options] as const);
}

/**
 * axe reads the terminal's text only from the DOM renderer's rows (WebGL draws on a
 * canvas): the pane must use it. Headless Chromium's WebGL is software, which picks
 * the DOM renderer as it comes (test 4); the override makes sure of it on a GPU too.
 */
async function useDomRenderer(page: Page): Promise<void> {
  await page.evaluate(() => { localStorage.setItem('duet.renderer', 'dom'); });
}

/** Switches the page to `scheme` with its own toggle. */
async function useScheme(page: Page, scheme: 'light' | 'dark'): Promise<void> {
  if ((await page.locator('html').getAttribute('data-theme')) !== scheme) await page.locator('.theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
}

async function expectDomRows(page: Page): Promise<void> {
  await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer', 'dom');
  await expect(page.locator('.terminal-host .xterm-rows .xterm-dim').first()).toBeAttached();
}

for (const device of ['desktop', 'phone'] as const) {
  test(`no serious or critical axe violations, the terminal's cells included (${device})`, async ({ browser, duet }) => {
    test.setTimeout(180_000);
    // bypassCSP: the page's CSP (script-src 'self') would refuse the injected axe-core.
    const page = await login(browser, duet, { ...(device === 'desktop' ? { viewport: DESKTOP } : PHONE), bypassCSP: true });
    try {
      await useDomRenderer(page);
      await (device === 'phone' ? apiStart(page, duet, 'demo') : startSession(page, 'demo'));
      await sendChat(page, 'edit notes.txt');
      await expect(page.locator('.approval')).toBeVisible();
      // The demo agent's status row and hints are dim (SGR 2): xterm drew them at
      // 3.0:1 (light) and 4.1:1 (dark) before terminal/dim.ts.
      await expectDomRows(page);
      await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
      const found: string[] = [];
      for (const scheme of ['light', 'dark'] as const) {
        await useScheme(page, scheme);
        for (const layout of ['Split', 'Chat', 'Terminal']) {
          await page.getByRole('button', { name: layout, exact: true }).click();
          const result = await axeViolations(page, null);
          found.push(...result.map((r) => `${scheme}/${layout}: ${r}`));
        }
      }
      await page.screenshot({ path: shot(`axe-${device}`) });
      expect(found).toEqual([]);
    } finally {
      await page.evaluate(() => { localStorage.removeItem('duet.renderer'); });
      await endSessions(page, duet);
      await page.context().close();
    }
  });
}

test('dim terminal text of every kind of colour reads at 4.5:1 in both themes', async ({ browser, duet }) => {
  test.setTimeout(120_000);
  const page = await login(browser, duet, { viewport: DESKTOP, bypassCSP: true });
  try {
    await useDomRenderer(page);
    await startSession(page, 'shell');
    await shellReady(page);
    // Dim in the default colour, in palette colours (dark and light ones), a
    // 256-colour one, a 24-bit one, and on the inverted default.
    await typeInTerminal(page, String.raw`clear; printf '\e[2mdim-0 \e[31mdim-1 \e[33mdim-3 \e[37mdim-7 \e[90mdim-8 \e[97mdim-15 \e[38;5;226mdim-226 \e[38;2;250;250;120mdim-rgb \e[0;2;7mdim-inv\e[0m
'`);
    await page.keyboard.press('Enter');
    await expectTerminal(page, /dim-0 dim-1 dim-3 dim-7 dim-8 dim-15 dim-226 dim-rgb dim-inv/);
    await expectDomRows(page);
    await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await useScheme(page, scheme);
      // Every dim cell was seen (axe passes text it could not measure as "incomplete").
      const measured = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (ctx: object, opts: object) => Promise<{ passes: { nodes: unknown[] }[] }> } }).axe;
        const r = await axe.run({ include: [['.terminal-host .xterm-rows .xterm-dim']] }, { runOnly: ['color-contrast'], resultTypes: ['passes'] });
        return r.passes.reduce((n, p) => n + p.nodes.length, 0);
      });
      expect(measured, `${scheme}: dim cells axe measured`).toBeGreaterThan(0);
      const result = await axeViolations(page, { include: [['.terminal-host .xterm-rows']] }, { runOnly: ['color-contrast'] });
      found.push(...result.map((r) => `${scheme}: ${r}`));
      await page.locator('.terminal-host .xterm-screen').screenshot({ path: shot(`dim-${scheme}`) });
    }
    expect(found).toEqual([]);
  } finally {
    await page.evaluate(() => { localStorage.removeItem('duet.renderer'); });
    await endSessions(page, duet);
    await page.context().close();
  }
});
