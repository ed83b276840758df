// The phone key bar's bytes: what xterm sends for each key, in normal and in
// application cursor mode.
import { describe, expect, it } from 'vitest';
import { BAR_KEYS } from '../src/terminal/terminal';

describe('the phone key bar', () => {
  const bytes = (name: string, app = false): string => BAR_KEYS.find((k) => k.name === name)?.bytes(app) ?? '?';
  it('sends what xterm sends for each key', () => {
    expect(BAR_KEYS.map((k) => k.label)).toEqual(['Esc', 'Tab', '⇧Tab', 'Ctrl+C', '←', '↑', '↓', '→', 'Enter']);
    expect(bytes('Esc')).toBe('\x1b');
    expect(bytes('Tab')).toBe('\t');
    expect(bytes('Shift+Tab')).toBe('\x1b[Z');
    expect(bytes('Ctrl+C')).toBe('\x03');
    expect(bytes('Enter')).toBe('\r');
    expect(['Left', 'Up', 'Down', 'Right'].map((n) => bytes(n))).toEqual(['\x1b[D', '\x1b[A', '\x1b[B', '\x1b[C']);
  });
  it('follows application cursor mode (DECCKM), as xterm does', () => {
    expect(['Left', 'Up', 'Down', 'Right'].map((n) => bytes(n, true))).toEqual(['\x1bOD', '\x1bOA', '\x1bOB', '\x1bOC']);
  });
});
