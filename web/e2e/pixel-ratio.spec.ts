// The terminal draws at any devicePixelRatio (1, 2, 3), and falls back to the
// DOM renderer by itself when WebGL's context is lost. Screenshots:
// test-results/screenshots/dpr-*.png.
import type { Page } from '@playwright/test';
import { expect, expectTerminal, startSession, test, typeInTerminal } from './fixtures';
import { endSessions, login, shellReady, shot } from './helpers';

/** The share of the terminal screen's pixels that differ from its background (text has ink). */
async function ink(page: Page): Promise<number> {
  const png = await page.locator('.terminal-host .xterm-screen').screenshot();
  return page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const c = new OffscreenCanvas(bmp.width, bmp.height);
    const g = c.getContext('2d');
    if (!g) return -1;
    g.drawImage(bmp, 0, 0);
    const { data } = g.getImageData(0, 0, bmp.width, bmp.height);
    const bg = [data[0], data[1], data[2]];
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs((data[i] ?? 0) - (bg[0] ?? 0)) + Math.abs((data[i + 1] ?? 0) - (bg[1] ?? 0)) + Math.abs((data[i + 2] ?? 0) - (bg[2] ?? 0)) > 60) n++;
    return n / (bmp.width * bmp.height);
  }, png.toString('base64'));
}

/** Prints a line the pixel check can see, and waits for it in the buffer. */
async function printInk(page: Page, word: string): Promise<void> {
  await typeInTerminal(page, `printf "%s\\n" ${word}-$((40+2)) XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX`);
  await page.keyboard.press('Enter');
  await expectTerminal(page, new RegExp(`^${word}-42$`, 'm'));
}

for (const dpr of [1, 2, 3]) {
  test(`the terminal renders at devicePixelRatio ${String(dpr)}, and falls back to the DOM renderer`, async ({ browser, duet }) => {
    test.setTimeout(120_000);
    const page = await login(browser, duet, { viewport: { width: 1000, height: 700 }, deviceScaleFactor: dpr });
    try {
      // As it comes: headless Chromium's WebGL is SwiftShader (software), so the DOM renderer draws.
      await startSession(page, 'shell');
      await shellReady(page);
      await printInk(page, 'first');
      await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer', 'dom');
      await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer-reason', /software-webgl|no-webgl2/);
      await expect.poll(() => ink(page)).toBeGreaterThan(0.002);
      await page.locator('.terminal-host .xterm-screen').screenshot({ path: shot(`dpr${String(dpr)}-default`) });

      // WebGL forced on, then its context lost: the DOM renderer takes over by itself.
      await page.evaluate(() => { localStorage.setItem('duet.renderer', 'webgl'); });
      await page.reload();
      await expect.poll(() => page.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
      await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer', 'webgl');
      await expect(page.locator('.terminal-host canvas').first()).toBeAttached();
      if (dpr === 1) await expect.poll(() => ink(page)).toBeGreaterThan(0.002); // software WebGL draws at dpr 1
      const lost = await page.evaluate(() => {
        for (const c of document.querySelectorAll<HTMLCanvasElement>('.terminal-host canvas')) {
          const ext = c.getContext('webgl2')?.getExtension('WEBGL_lose_context');
          if (ext) { ext.loseContext(); return true; }
        }
        return false;
      });
      expect(lost).toBe(true);
      await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer', 'dom');
      await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer-reason', 'context-lost');
      await expect(page.locator('.terminal-host canvas')).toHaveCount(0);
      await printInk(page, 'after');
      await expect(page.locator('.terminal-host .xterm-rows')).toContainText('after-42');
      await expect.poll(() => ink(page)).toBeGreaterThan(0.002);
      await page.locator('.terminal-host .xterm-screen').screenshot({ path: shot(`dpr${String(dpr)}-after-loss`) });
      await page.evaluate(() => { localStorage.removeItem('duet.renderer'); });
    } finally {
      await endSessions(page, duet);
      await page.context().close();
    }
  });
}
