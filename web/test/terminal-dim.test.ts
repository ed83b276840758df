// Dim terminal text at WCAG AA: every colour's dim form, in both themes, reads at
// 4.5:1 on the background and stays dimmer than the colour itself.
import { describe, expect, it } from 'vitest';
import { contrast, DIM_CONTRAST, dimColour, dimRules, palette } from '../src/terminal/dim';
import { terminalThemes, type ThemeName } from '../src/ui/theme';

const themes: ThemeName[] = ['light', 'dark'];

describe('dim colours', () => {
  it('give what xterm drew (3.0:1 light, 4.1:1 dark) 4.5:1 or more, still dimmer than normal text', () => {
    for (const name of themes) {
      const t = terminalThemes[name];
      const [fg, bg] = [t.foreground ?? '', t.background ?? ''];
      const dim = dimColour(fg, bg);
      expect(contrast(dim, bg)).toBeGreaterThanOrEqual(4.5);
      expect(contrast(dim, bg)).toBeLessThan(contrast(fg, bg));
    }
  });

  it('read at 4.5:1 for all 256 colours of both themes', () => {
    for (const name of themes) {
      const t = terminalThemes[name];
      const bg = t.background ?? '';
      const colours = palette(t);
      expect(colours).toHaveLength(256);
      for (const c of colours) {
        const dim = dimColour(c, bg);
        expect(contrast(dim, bg), `${name} ${c} → ${dim}`).toBeGreaterThanOrEqual(4.5);
        // Dim is never brighter than the colour itself when that read already.
        if (contrast(c, bg) >= DIM_CONTRAST) expect(contrast(dim, bg)).toBeLessThanOrEqual(contrast(c, bg));
      }
    }
  });

  it('are half way to the background where that reads, as xterm draws them', () => {
    // White on black: half way is 5.3:1.
    expect(dimColour('#ffffff', '#000000')).toBe('#808080');
    // Black on white: half way would be 4.0:1, so less than half.
    const dim = dimColour('#000000', '#ffffff');
    expect(contrast(dim, '#ffffff')).toBeGreaterThanOrEqual(4.5);
    expect(contrast(dim, '#ffffff')).toBeLessThan(4.7);
  });

  it('become rules per theme that outrank xterm\'s own', () => {
    const rules = dimRules('light');
    expect(rules).toContain('html[data-theme="light"] .xterm .xterm-rows .xterm-dim {');
    expect(rules).toContain('.xterm-fg-255.xterm-dim');
    expect(rules).toContain('!important');
  });
});
