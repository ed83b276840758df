// Issue 11: never miss an approval; a phone key bar; cell-exact attach; any
// pixel ratio; accessibility; copy and an unclipped bottom row. Screenshots of
// each case at desktop (1400×900) and phone (390×844, dpr 2) go to
// test-results/screenshots/issue11-*.png.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from '@playwright/test';
import { expect, expectTerminal, openSession, screenshotDir, sendChat, startSession, terminalText, test, typeInTerminal, type Duet } from './fixtures';

const require = createRequire(import.meta.url);
const DESKTOP = { width: 1400, height: 900 };
const PHONE: BrowserContextOptions = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true };
const shot = (name: string): string => join(screenshotDir, `issue11-${name}.png`);

async function login(browser: Browser, duet: Duet, opts: BrowserContextOptions): Promise<Page> {
  const ctx = await browser.newContext(opts);
  const page = await ctx.newPage();
  await page.goto(`${duet.baseURL}/?token=${duet.token}`);
  await expect(page.locator('.topbar')).toBeVisible();
  return page;
}

async function endSessions(page: Page, duet: Duet): Promise<void> {
  const res = await page.request.get(`${duet.baseURL}/api/sessions`);
  for (const s of (await res.json()) as { id: string }[]) await page.request.delete(`${duet.baseURL}/api/sessions/${encodeURIComponent(s.id)}`);
}

/** Starts a session over the API and opens it (the phone's sidebar is a drawer). */
async function apiStart(page: Page, duet: Duet, profile: string): Promise<string> {
  const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile } });
  const { id } = (await res.json()) as { id: string };
  await page.goto(`${duet.baseURL}/#/session/${encodeURIComponent(id)}`);
  await expect.poll(() => page.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
  return id;
}

/** Waits until the shell reads its input (typing earlier lands in the tty's echo before bash runs). */
async function shellReady(page: Page): Promise<void> {
  // First the PTY must have this pane's size and the shell its prompt: keys
  // typed while the pane's first resize is on its way are echoed at the old
  // width, and readline's redraw at the new one leaves a line xterm and the
  // shell disagree about (failed ~1 run in 4 on a loaded machine, with this
  // stop's and last stop's builds alike).
  await expect.poll(async () => {
    const d = await page.evaluate(() => window.duet?.screen());
    if (!d) return false;
    const [base, route] = page.url().split('#');
    const id = /^\/session\/([^/?]+)/.exec(route ?? '')?.[1];
    if (id === undefined) return false;
    const res = await page.request.get(`${base ?? ''}api/sessions/${id}`);
    const live = res.ok() ? ((await res.json()) as { cols: number; rows: number }) : undefined;
    const last = d.lines.map((l) => l.text.trimEnd()).filter((t) => t !== '').pop() ?? '';
    return live?.cols === d.cols && live.rows === d.rows && /[#$]$/.test(last);
  }, { timeout: 15_000 }).toBe(true);
  await typeInTerminal(page, 'echo ready-$((40+2))');
  await page.keyboard.press('Enter');
  await expectTerminal(page, /^ready-42$/m);
}

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
  test(`1. an approval is never missed (${device})`, async ({ browser, duet }) => {
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

test('2. the phone key bar sends real keys to the program', async ({ browser, duet }) => {
  test.setTimeout(120_000);
  const page = await login(browser, duet, PHONE);
  try {
    await apiStart(page, duet, 'shell');
    const bar = page.getByRole('toolbar', { name: 'Terminal keys' });
    await expect(bar).toBeVisible();
    await shellReady(page);
    await typeInTerminal(page, 'cat -vT'); // -T: a tab shows as ^I
    await page.keyboard.press('Enter');
    for (const name of ['Esc', 'Tab', 'Shift+Tab', 'Left', 'Up', 'Down', 'Right', 'Enter']) await bar.getByRole('button', { name, exact: true }).tap();
    await expectTerminal(page, /^\^\[\^I\^\[\[Z\^\[\[D\^\[\[A\^\[\[B\^\[\[C$/m);
    await page.screenshot({ path: shot('keybar-phone') });
    await bar.getByRole('button', { name: 'Ctrl+C', exact: true }).tap();
    // The terminal echoes ^C at once; the shell's prompt comes once cat has
    // died and bash is back. Keys typed in between are read across the
    // switch from cat's line mode to readline's, which garbled them
    // ("back-420+22))"; failed twice in one CI run): wait for the prompt.
    await expect.poll(async () => {
      const t = await terminalText(page);
      const i = t.lastIndexOf('^C');
      return i >= 0 && /[#$]\s*$/.test(t.slice(i));
    }, { message: 'the prompt after ^C' }).toBe(true);
    await page.keyboard.type('echo back-$((20+22))');
    await bar.getByRole('button', { name: 'Enter', exact: true }).tap();
    await expectTerminal(page, /^back-42$/m);
    // The terminal keeps the keyboard: the key bar never takes focus.
    await expect(page.locator('.xterm-helper-textarea')).toBeFocused();
    // A shorter visual viewport (the on-screen keyboard): the prompt line stays on screen.
    await page.setViewportSize({ width: 390, height: 500 });
    await expect.poll(async () => {
      const r = await page.locator('.key-bar').boundingBox();
      return r !== null && r.y + r.height <= 500;
    }).toBe(true);
    await page.screenshot({ path: shot('keybar-short-phone') });
  } finally {
    await endSessions(page, duet);
    await page.context().close();
  }
});

interface Dump { cols: number; rows: number; lines: { text: string; wrapped: boolean }[]; cursor: [number, number]; alt: boolean; driver: boolean; renderer: string }
const screen = (p: Page): Promise<Dump | undefined> => p.evaluate(() => window.duet?.screen());
const cells = (d: Dump | undefined): string => JSON.stringify(d && { cols: d.cols, rows: d.rows, alt: d.alt, lines: d.lines });

// Two rendering steps: the page has dispatched its `resize` event for the
// size before. Two quick resizes that end at the size the page had can reach
// it as one event with no change, which is no user resize (terminal.ts), and
// the window then never took the PTY size (failed once in CI).
const frames = (p: Page): Promise<void> =>
  p.evaluate(() => new Promise<void>((done) => { requestAnimationFrame(() => { requestAnimationFrame(() => { done(); }); }); }));

const SIZES: [{ width: number; height: number }, { width: number; height: number }][] = [
  [DESKTOP, DESKTOP],
  [DESKTOP, { width: 900, height: 640 }],
  [{ width: 820, height: 600 }, { width: 1280, height: 860 }],
];

for (const program of ['demo', 'less'] as const) {
  test(`3. a reload shows exactly the live terminal's cells (${program})`, async ({ loggedIn: a, duet }) => {
    // Once failed with the demo agent: on a shrink xterm keeps the bottom rows
    // (the top ones go to its scrollback), the server's vt100 screen keeps the
    // top ones; now every client redraws from the server's screen after a resize.
    test.setTimeout(240_000);
    await a.setViewportSize(DESKTOP);
    const id = await startSession(a, program === 'demo' ? 'demo' : 'shell');
    if (program === 'demo') {
      await a.getByRole('button', { name: 'Split', exact: true }).click();
      await sendChat(a, `hello ${'with a long line that wraps in narrow terminals '.repeat(4)}`);
      await expect(a.getByRole('status')).toContainText('Idle');
    } else {
      await shellReady(a);
      await typeInTerminal(a, "for i in $(seq 1 400); do echo \"line $i $(printf 'wrap%.0s-' $(seq 1 $((i % 60))))\"; done > /tmp/duet-less.txt; less /tmp/duet-less.txt");
      await a.keyboard.press('Enter');
      await expectTerminal(a, /line 1 /);
    }
    const b = await a.context().newPage();
    await openSession(b, duet, id);
    for (const [i, [sa, sb]] of SIZES.entries()) {
      // B's window changes first, then A's: A resized last, so A drives.
      // The user acts in the window in front (a background tab gets no resize events until shown).
      await b.bringToFront();
      await b.setViewportSize({ width: sb.width - 20, height: sb.height });
      await frames(b);
      await b.setViewportSize(sb);
      // Two windows resized within the same instant race (the server's `resize` names no client): let B's settle.
      await expect.poll(async () => (await screen(b))?.driver).toBe(true);
      await b.waitForTimeout(500);
      await a.bringToFront();
      await a.setViewportSize({ width: sa.width - 20, height: sa.height });
      await frames(a);
      await a.setViewportSize(sa);
      await expect.poll(async () => (await screen(a))?.driver).toBe(true);
      if (program === 'less') {
        // Move in the file so the screen is redrawn at this size.
        await a.locator('.terminal-pane .xterm').click();
        await a.keyboard.press('Space');
      } else {
        await sendChat(a, `size pair ${String(i)}: ${'text '.repeat(40)}`);
        await expect(a.getByRole('status')).toContainText('Idle');
      }
      await b.bringToFront();
      await b.reload();
      await expect.poll(() => b.evaluate(() => window.duet?.connected() ?? false)).toBe(true);
      // Both tabs are live: A may still be drawing the reply's last bytes, so compare them together until they agree.
      await expect.poll(async () => {
        const [da, db] = [cells(await screen(a)), cells(await screen(b))];
        return da === db ? 'equal' : `A: ${da}\nB: ${db}`;
      }, { message: `pair ${String(i)}: B's cells equal A's` }).toBe('equal');
      const d = await screen(b);
      expect(d?.driver).toBe(false);
      if (i === 1) {
        await a.screenshot({ path: shot(`attach-${program}-a-desktop`) });
        await b.screenshot({ path: shot(`attach-${program}-b-reloaded`) });
      }
    }
    // "Fit to my window" makes B the driver; A then follows B's size.
    const fit = b.getByRole('button', { name: 'Fit to my window' });
    await expect(fit).toBeVisible();
    await fit.click();
    await expect.poll(async () => (await screen(b))?.driver).toBe(true);
    await expect.poll(async () => (await screen(a))?.cols).toBe((await screen(b))?.cols);
    await b.close();
  });
}

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
  test(`4. the terminal renders at devicePixelRatio ${String(dpr)}, and falls back to the DOM renderer`, async ({ browser, duet }) => {
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
  test(`5. no serious or critical axe violations, the terminal's cells included (${device})`, async ({ browser, duet }) => {
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

test('5. dim terminal text of every kind of colour reads at 4.5:1 in both themes', async ({ browser, duet }) => {
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

test('6. Ctrl+Shift+C copies the terminal selection; the bottom row is not clipped', async ({ browser, duet }) => {
  test.setTimeout(120_000);
  const page = await login(browser, duet, { viewport: DESKTOP, permissions: ['clipboard-read', 'clipboard-write'] });
  try {
    await startSession(page, 'shell');
    await shellReady(page);
    await typeInTerminal(page, 'clear; echo copyme-$((40+2))');
    await page.keyboard.press('Enter');
    await expectTerminal(page, /^copyme-42$/m);
    // A terminal-only profile (shell) has no layout switch: the terminal fills the workspace.
    await expect(page.getByRole('button', { name: 'Terminal', exact: true })).toHaveCount(0);
    // Select the output line by double-clicking its word.
    const box = await page.locator('.terminal-host .xterm-screen').boundingBox();
    const d = await screen(page);
    const row = d?.lines.findIndex((l) => l.text === 'copyme-42') ?? -1;
    expect(row).toBeGreaterThanOrEqual(0);
    if (!box || !d) throw new Error('no terminal');
    const cellH = box.height / d.rows;
    const cellW = box.width / d.cols;
    await page.mouse.click(box.x + cellW * 2, box.y + cellH * (row + 0.5), { clickCount: 3 });
    await page.keyboard.press('Control+Shift+C');
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('copyme-42');
    // Ctrl+C is still the interrupt.
    await page.keyboard.type('sleep 30');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+C');
    await expectTerminal(page, /\^C/);
    // The context menu's Copy: on a right click the terminal's focused textarea holds the selection, selected.
    await page.evaluate(() => navigator.clipboard.writeText(''));
    await page.mouse.click(box.x + cellW * 2, box.y + cellH * (row + 0.5), { clickCount: 3 });
    await page.mouse.click(box.x + cellW * 2, box.y + cellH * (row + 0.5), { button: 'right' });
    await expect.poll(() => page.evaluate(() => {
      const ta = document.activeElement;
      return ta instanceof HTMLTextAreaElement ? ta.value.slice(ta.selectionStart, ta.selectionEnd) : '';
    })).toContain('copyme-42');
    // What the menu's Copy does: copy the page's selection.
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- what the browser's own Copy item does; no other API copies the page's selection
    await page.evaluate(() => document.execCommand('copy'));
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toContain('copyme-42');
    // The bottom row sits inside the pane at 1400×900.
    const clip = await page.evaluate(() => {
      const host = document.querySelector('.terminal-host');
      const scr = document.querySelector('.terminal-host .xterm-screen');
      const pane = document.querySelector('.terminal-pane');
      if (!host || !scr || !pane) return null;
      const h = host.getBoundingClientRect();
      const s = scr.getBoundingClientRect();
      const p = pane.getBoundingClientRect();
      return { screenBottom: s.bottom, hostBottom: h.bottom, paneBottom: p.bottom, viewport: innerHeight };
    });
    expect(clip).not.toBeNull();
    expect(clip?.screenBottom ?? 1e9).toBeLessThanOrEqual(Math.min(clip?.hostBottom ?? 0, clip?.paneBottom ?? 0, clip?.viewport ?? 0) + 0.5);
    await page.screenshot({ path: shot('terminal-bottom-desktop') });
  } finally {
    await endSessions(page, duet);
    await page.context().close();
  }
});
