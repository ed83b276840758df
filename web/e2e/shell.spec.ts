// A terminal-only profile (a login shell): keystrokes, output and the PTY size.
import { expect, expectTerminal, startSession, terminalText, test, typeInTerminal } from './fixtures';

test('a login shell runs in the terminal pane, and its size follows the pane', async ({ loggedIn: page }) => {
  await startSession(page, 'shell');
  // No sidecar: the split layout shows only the terminal.
  await expect(page.locator('.chat-pane')).toBeHidden();
  await typeInTerminal(page, 'echo $((6*7))');
  await page.keyboard.press('Enter');
  await expectTerminal(page, /^42$/m);

  await typeInTerminal(page, 'stty size');
  await page.keyboard.press('Enter');
  await expectTerminal(page, /^\d+ \d+$/m);
  const before = /^(\d+) (\d+)$/m.exec(await terminalText(page));
  await page.setViewportSize({ width: 900, height: 600 });
  // The pane's resize reaches the PTY after a debounce: wait until the server
  // reports the new width before asking the shell.
  await expect
    .poll(async () =>
      page.evaluate(async () => {
        const sessions = (await (await fetch('/api/sessions')).json()) as { cols: number }[];
        return String(sessions[sessions.length - 1]?.cols);
      }),
    )
    .not.toBe(before?.[2]);
  await page.keyboard.type('clear; stty size');
  await page.keyboard.press('Enter');
  await expect.poll(async () => /^(\d+) (\d+)$/m.exec(await terminalText(page))?.[2]).not.toBe(before?.[2]);
});

test('without a cookie the page asks for the token', async ({ browser, duet }) => {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  await page.goto(`${duet.baseURL}/`);
  const input = page.getByLabel('Access token');
  await input.fill('not-the-token-0000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('not accepted');
  await input.fill(duet.token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.locator('.topbar')).toBeVisible();
  await ctx.close();
});

test('a flood of output does not freeze the tab (flow control)', async ({ loggedIn: page }) => {
  test.setTimeout(120_000);
  await startSession(page, 'shell');
  await typeInTerminal(page, 'base64 /dev/urandom | head -c 12000000; echo flood-$((40+2))');
  await page.keyboard.press('Enter');
  // While it pours in, the page keeps answering quickly.
  for (let i = 0; i < 5; i++) {
    const t0 = Date.now();
    await page.evaluate(() => window.duet?.flow());
    expect(Date.now() - t0).toBeLessThan(2000);
  }
  await expect.poll(() => terminalText(page), { timeout: 90_000 }).toMatch(/flood-42$/m);
  const flow = await page.evaluate(() => window.duet?.flow());
  console.log('flow control:', JSON.stringify(flow));
  // The backlog stayed bounded: pause kicks in at 512 KiB; frames in flight add a little.
  expect(flow?.peak ?? 0).toBeLessThan(4 * 1024 * 1024);
});
