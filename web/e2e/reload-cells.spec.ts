// Cell-exact attach: a reloaded tab shows exactly the live tab's cells (text
// and wrap flags) at three pairs of window sizes, with the demo agent and with
// `less`, and "Fit to my window" hands the size to the other tab.
// Screenshots: test-results/screenshots/attach-*.png.
import { expect, expectTerminal, frames, openSession, sendChat, startSession, test, typeInTerminal } from './fixtures';
import { DESKTOP, screen, shellReady, shot, type Dump } from './helpers';

const cells = (d: Dump | undefined): string => JSON.stringify(d && { cols: d.cols, rows: d.rows, alt: d.alt, lines: d.lines });

// Why each resize below waits for `frames` (two rendering steps): then the page has dispatched its `resize` event for the
// size before. Two quick resizes that end at the size the page had can reach
// it as one event with no change, which is no user resize (terminal.ts), and
// the window then never took the PTY size (failed once in CI).

const SIZES: [{ width: number; height: number }, { width: number; height: number }][] = [
  [DESKTOP, DESKTOP],
  [DESKTOP, { width: 900, height: 640 }],
  [{ width: 820, height: 600 }, { width: 1280, height: 860 }],
];

for (const program of ['demo', 'less'] as const) {
  test(`a reload shows exactly the live terminal's cells (${program})`, async ({ loggedIn: a, duet }) => {
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
