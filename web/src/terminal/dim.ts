// Dim text (SGR 2) that still reads at WCAG AA (4.5:1). xterm draws a dim cell
// in its colour at half opacity, and its minimumContrastRatio asks a dim cell
// for half the ratio only (so dim stays unlike normal text): the demo agent's
// hints came out at 3.0:1 in the light theme and 4.1:1 in the dark one (axe,
// issue 27). No option or palette can fix that: even black at half opacity on
// a light background is 3.9:1. So the DOM renderer's dim colours are replaced
// by a stylesheet: each colour is mixed toward the background only as far as
// 4.5:1 allows, so dim stays dimmer than normal text but reads. A dim cell
// whose colour xterm set inline (a 24-bit colour, or one xterm raised to its
// half ratio) gets the theme's dim foreground: its own colour is unknown to a
// stylesheet. Dim text on the inverted default colours is dimmed toward the
// foreground colour it stands on; on a palette background it keeps xterm's
// colour (programs hardly combine the two). The WebGL renderer (a hardware
// GPU, terminal/renderer.ts) paints dim glyphs itself at half opacity, out
// of any stylesheet's reach.
import type { ITheme } from '@xterm/xterm';
import { terminalThemes, type ThemeName } from '../ui/theme';

/** The ratio dim text gets: AA's 4.5, and a margin for rounding. */
export const DIM_CONTRAST = 4.6;

type Rgb = readonly [number, number, number];

/** `#rrggbb` as numbers. */
export function parseHex(hex: string): Rgb {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) throw new Error(`not a #rrggbb colour: ${hex}`);
  return [parseInt(m[1] ?? '0', 16), parseInt(m[2] ?? '0', 16), parseInt(m[3] ?? '0', 16)];
}

function hex(c: Rgb): string {
  return `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
}

/** WCAG 2 relative luminance. */
function luminance(c: Rgb): number {
  const [r, g, b] = c.map((v) => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two colours. */
export function contrast(a: string, b: string): number {
  const [la, lb] = [luminance(parseHex(a)), luminance(parseHex(b))];
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** `from` moved a fraction `t` of the way to `to`, rounded as a browser paints it. */
function mix(from: Rgb, to: Rgb, t: number): string {
  return hex([0, 1, 2].map((i) => Math.round((from[i] ?? 0) + ((to[i] ?? 0) - (from[i] ?? 0)) * t)) as unknown as Rgb);
}

/** The largest `t` in [0, max] for which `ok(t)` holds, given ok(0) holds and ok falls off with t. */
function furthest(max: number, ok: (t: number) => boolean): number {
  if (ok(max)) return max;
  let [lo, hi] = [0, max];
  for (let i = 0; i < 24; i++) {
    const mid = (lo + hi) / 2;
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * How a dim cell of colour `fg` is drawn on `bg`: as xterm would (half way to the
 * background) where that reads at DIM_CONTRAST, otherwise only as far toward the
 * background as DIM_CONTRAST allows; a colour already below it is moved away from
 * the background until it reaches it.
 */
export function dimColour(fg: string, bg: string): string {
  const [f, b] = [parseHex(fg), parseHex(bg)];
  if (contrast(fg, bg) >= DIM_CONTRAST) {
    return mix(f, b, furthest(0.5, (t) => contrast(mix(f, b, t), bg) >= DIM_CONTRAST));
  }
  const away: Rgb = luminance(b) > 0.18 ? [0, 0, 0] : [255, 255, 255];
  const reads = (t: number): boolean => contrast(mix(f, away, t), bg) >= DIM_CONTRAST;
  // The least move that reads: the furthest it may stay back from `away`.
  return mix(away, f, furthest(1, (t) => reads(1 - t)));
}

/** xterm's 256-colour palette: the theme's 16, then the 6×6×6 cube and the grey ramp. */
export function palette(theme: ITheme): string[] {
  const named = [
    theme.black, theme.red, theme.green, theme.yellow, theme.blue, theme.magenta, theme.cyan, theme.white,
    theme.brightBlack, theme.brightRed, theme.brightGreen, theme.brightYellow, theme.brightBlue, theme.brightMagenta, theme.brightCyan, theme.brightWhite,
  ];
  const colours = named.map((c) => {
    if (c === undefined) throw new Error('the terminal theme names all 16 colours');
    return c;
  });
  const levels = [0, 95, 135, 175, 215, 255];
  for (let i = 0; i < 216; i++) colours.push(hex([levels[Math.floor(i / 36)] ?? 0, levels[Math.floor(i / 6) % 6] ?? 0, levels[i % 6] ?? 0]));
  for (let i = 0; i < 24; i++) colours.push(hex([8 + i * 10, 8 + i * 10, 8 + i * 10]));
  return colours;
}

/** xterm's class for the default foreground and background swapped (SGR 7). */
const INVERTED_DEFAULT = 257;

/** The rules for one theme, under `html[data-theme=…]` (they outrank xterm's own). */
export function dimRules(name: ThemeName, theme: ITheme = terminalThemes[name]): string {
  const bg = theme.background ?? '#000000';
  const fg = theme.foreground ?? '#ffffff';
  const rows = `html[data-theme="${name}"] .xterm .xterm-rows`;
  // A colour xterm set inline outranks any class: only !important reaches it.
  const inline = (sel: string): string => `${rows} ${sel}[style^="color:"], ${rows} ${sel}[style*=";color:"]`;
  const rules = [
    `${rows} .xterm-dim { color: ${dimColour(fg, bg)}; }`,
    `${inline('.xterm-dim')} { color: ${dimColour(fg, bg)} !important; }`,
  ];
  palette(theme).forEach((c, i) => {
    rules.push(`${rows} .xterm-fg-${String(i)}.xterm-dim { color: ${dimColour(c, bg)}; }`);
  });
  // Inverted default colours (SGR 7): the cell's background is the foreground
  // colour, and xterm colours its text inline.
  const inverted = `.xterm-bg-${String(INVERTED_DEFAULT)}.xterm-dim`;
  rules.push(`${rows} ${inverted}, ${inline(inverted)} { color: ${dimColour(bg, fg)} !important; }`);
  return rules.join('\n');
}

/** Adds the dim rules of both themes to the page, once; the page's `data-theme` picks. */
export function installDimStyles(): void {
  if (document.getElementById('terminal-dim') !== null) return;
  const style = document.createElement('style');
  style.id = 'terminal-dim';
  style.textContent = `${dimRules('light')}\n${dimRules('dark')}`;
  document.head.append(style);
}
