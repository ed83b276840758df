// The phone key bar sends real keys to the program (checked with `cat -vT` in
// a shell), never takes the terminal's focus, and stays on screen above the
// on-screen keyboard. Screenshots: test-results/screenshots/keybar-*.png.
import { expect, expectTerminal, terminalText, test, typeInTerminal } from './fixtures';
import { apiStart, endSessions, login, PHONE, shellReady, shot } from './helpers';

test('the phone key bar sends real keys to the program', async ({ browser, duet }) => {
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
