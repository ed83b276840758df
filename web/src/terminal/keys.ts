// The terminal's own keys: the one that leads the keyboard out of it, and the
// phone key bar's, which an on-screen keyboard lacks.

/**
 * The key that leads the keyboard out of the terminal, which otherwise keeps
 * Tab, Shift+Tab and Escape for the program. A TUI loses nothing to it: a
 * terminal sends Ctrl+Shift+X as Ctrl+X, which stays available.
 */
export const LEAVE_KEY = 'Ctrl+Shift+X';

export function isLeaveKey(ev: KeyboardEvent): boolean {
  // ev.code: the key's place, for layouts whose X key types another letter.
  return ev.ctrlKey && ev.shiftKey && !ev.altKey && !ev.metaKey && (ev.key === 'X' || ev.key === 'x' || ev.code === 'KeyX');
}

/** The phone key bar: label, accessible name, and the bytes (or a function of the terminal's modes). */
export interface BarKey {
  readonly label: string;
  readonly name: string;
  readonly bytes: (appCursor: boolean) => string;
}

/** Keys an on-screen keyboard lacks, as xterm would send them. */
export const BAR_KEYS: readonly BarKey[] = [
  { label: 'Esc', name: 'Esc', bytes: () => '\x1b' },
  { label: 'Tab', name: 'Tab', bytes: () => '\t' },
  { label: '⇧Tab', name: 'Shift+Tab', bytes: () => '\x1b[Z' },
  { label: 'Ctrl+C', name: 'Ctrl+C', bytes: () => '\x03' },
  { label: '←', name: 'Left', bytes: (app) => (app ? '\x1bOD' : '\x1b[D') },
  { label: '↑', name: 'Up', bytes: (app) => (app ? '\x1bOA' : '\x1b[A') },
  { label: '↓', name: 'Down', bytes: (app) => (app ? '\x1bOB' : '\x1b[B') },
  { label: '→', name: 'Right', bytes: (app) => (app ? '\x1bOC' : '\x1b[C') },
  { label: 'Enter', name: 'Enter', bytes: () => '\r' },
];
