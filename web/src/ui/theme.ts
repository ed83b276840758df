// Light and dark themes: the page's CSS variables switch on <html data-theme>,
// and the same palette is handed to xterm.js. The default follows
// prefers-color-scheme until the user picks one, which is remembered.
import type { ITheme } from '@xterm/xterm';

/** A theme name. */
export type ThemeName = 'light' | 'dark';

const KEY = 'duet.theme';

/** xterm palettes matching the page's colours. */
export const terminalThemes: Record<ThemeName, ITheme> = {
  dark: {
    background: '#0f1115',
    foreground: '#d6dae0',
    cursor: '#e6e9ee',
    cursorAccent: '#0f1115',
    selectionBackground: '#3a4a66',
    black: '#1b1e24', red: '#f07178', green: '#a3d27a', yellow: '#e6c07b', blue: '#6cb0f5', magenta: '#c792ea', cyan: '#5fd0d6', white: '#d6dae0',
    brightBlack: '#5c6370', brightRed: '#ff8a8f', brightGreen: '#bde59a', brightYellow: '#f2d59b', brightBlue: '#8ec6ff', brightMagenta: '#dbb0f5', brightCyan: '#86e4e8', brightWhite: '#ffffff',
  },
  light: {
    background: '#fbfbfc',
    foreground: '#24292f',
    cursor: '#24292f',
    cursorAccent: '#fbfbfc',
    selectionBackground: '#b6d3f7',
    black: '#24292f', red: '#c8283c', green: '#1d7f32', yellow: '#8a6100', blue: '#0b62c4', magenta: '#8b3fc4', cyan: '#0f7a84', white: '#6e7781',
    brightBlack: '#57606a', brightRed: '#e0364a', brightGreen: '#2a9a44', brightYellow: '#a67700', brightBlue: '#2f7de0', brightMagenta: '#a35ad6', brightCyan: '#1898a3', brightWhite: '#8c959f',
  },
};

function systemTheme(): ThemeName {
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The chosen theme, or the system's. */
export function currentTheme(): ThemeName {
  const saved = localStorage.getItem(KEY);
  return saved === 'light' || saved === 'dark' ? saved : systemTheme();
}

/** Applies a theme to the page (and remembers it when `remember`). */
export function applyTheme(theme: ThemeName, remember: boolean): void {
  document.documentElement.dataset.theme = theme;
  document.querySelector('meta[name="theme-color"]')?.setAttribute('content', theme === 'dark' ? '#15171c' : '#ffffff');
  if (remember) localStorage.setItem(KEY, theme);
}

/** Calls `cb` when the system theme changes and the user has not picked one. */
export function onSystemThemeChange(cb: (t: ThemeName) => void): void {
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (localStorage.getItem(KEY) === null) cb(systemTheme());
  });
}
