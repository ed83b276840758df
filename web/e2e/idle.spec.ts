// An idle terminal costs the page nothing: no animation runs in it. xterm's
// DOM renderer (what draws without a hardware GPU, as here) blinks its cursor
// with a CSS animation that has Chromium restyle and paint a frame every
// vsync; so the cursor blinks only with WebGL, whose blink is a timer.
import { expect, startSession, test } from './fixtures';

test('a focused, idle terminal runs no animation with the DOM renderer', async ({ loggedIn: page }) => {
  await startSession(page, 'shell');
  await page.locator('.terminal-pane .xterm').click();
  await expect(page.getByRole('textbox', { name: 'Terminal input' })).toBeFocused();
  await expect(page.locator('.terminal-pane')).toHaveAttribute('data-renderer', 'dom');
  // The focused cursor is drawn: what would blink is there.
  await expect(page.locator('.terminal-pane .xterm-rows.xterm-focus .xterm-cursor')).toHaveCount(1);
  const running = await page.evaluate(() =>
    document.getAnimations()
      .filter((a) => a.playState === 'running' && a.effect instanceof KeyframeEffect && a.effect.target?.closest('.terminal-pane'))
      .map((a) => (a instanceof CSSAnimation ? a.animationName : a.id)),
  );
  expect(running).toEqual([]);
});
