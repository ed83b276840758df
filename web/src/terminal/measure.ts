// The size a new session's terminal will have in this window, measured before
// the session exists, so that its program starts at it: a program draws its
// first screen (an agent's banner, a shell's prompt) before the pane's first
// `resize` arrives, and on a phone a screen drawn 120 columns wide stays cut.
import type { ThemeName } from '../ui/theme';
import { TerminalPane } from './terminal';

/** The parts of the workspace the measurement lays out. */
export interface WorkspaceParts {
  /** The grid (its data-layout and data-chat choose where the terminal goes). */
  readonly workspace: HTMLElement;
  /** Where the session's terminal pane will be. */
  readonly termSlot: HTMLElement;
  /** What shows in place of a session (the empty state, the board): hidden meanwhile, and the workspace's data-cover dropped. */
  readonly covers: readonly HTMLElement[];
}

/**
 * The fit of a terminal pane in `parts.termSlot` with the workspace laid out
 * as for the new session: its chat or not (`hasChat`), and the terminal shown
 * even if the chat layout hides it (the layout it will be seen in). All is put
 * back before the browser paints. Null when there is no room to measure.
 */
export function measureNewTerminal(parts: WorkspaceParts, hasChat: boolean, layout: string, theme: ThemeName): { cols: number; rows: number } | null {
  const { workspace, termSlot, covers } = parts;
  const hidden = covers.map((c) => c.hidden);
  const chat = workspace.dataset.chat;
  const cover = workspace.dataset.cover;
  for (const c of covers) c.hidden = true;
  delete workspace.dataset.cover;
  workspace.dataset.chat = hasChat ? 'yes' : 'none';
  workspace.dataset.layout = layout === 'chat' ? 'terminal' : layout;
  try {
    return TerminalPane.measureIn(termSlot, theme);
  } finally {
    covers.forEach((c, i) => { c.hidden = hidden[i] ?? false; });
    if (cover !== undefined) workspace.dataset.cover = cover;
    if (chat === undefined) delete workspace.dataset.chat;
    else workspace.dataset.chat = chat;
    workspace.dataset.layout = layout;
  }
}
