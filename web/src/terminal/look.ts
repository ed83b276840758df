// How a terminal looks: the font, colours and contrast of every terminal of
// the app, and how a follower shows one larger than its pane (remembered).

import type { ITerminalOptions } from '@xterm/xterm';
import { terminalThemes, type ThemeName } from '../ui/theme';
import { installDimStyles } from './dim';

/** How every terminal of the app looks (the live one and the replay's). */
export function terminalLook(theme: ThemeName): ITerminalOptions {
  // Dim text reads too (terminal/dim.ts): a stylesheet, added once.
  installDimStyles();
  return {
    fontFamily: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace',
    fontSize: 13,
    lineHeight: 1.15,
    scrollback: 5000,
    theme: terminalThemes[theme],
    // Programs pick their own colours (dim grey, bright magenta) with no
    // thought for the theme: xterm lightens or darkens a foreground until it
    // reads against its background (WCAG AA, as the axe test checks). It asks
    // dim cells for half that; dim.ts's stylesheet gives them the whole.
    minimumContrastRatio: 4.5,
  };
}

/** How a follower shows a terminal larger than its pane: shrunk to fit, or at full size and scrolled. */
export type FollowView = 'scale' | 'scroll';

/** Where the follower's choice is kept (this browser's, like the layout). */
const FOLLOW_KEY = 'duet.terminalView';

export function savedFollowView(): FollowView {
  try {
    return localStorage.getItem(FOLLOW_KEY) === 'scroll' ? 'scroll' : 'scale';
  } catch {
    return 'scale';
  }
}

/** Keeps the follower's choice for the next pane of this browser. */
export function saveFollowView(view: FollowView): void {
  try {
    localStorage.setItem(FOLLOW_KEY, view);
  } catch {
    // Not remembered; this pane still shows it.
  }
}
