// Export from the UI (the top bar, while a session is open): the events as
// the server keeps them (NDJSON, verbatim), the chat as Markdown (made here
// from the chat state), the terminal recording as an asciicast (.cast) file;
// on a phone also the way to the replay, which the top bar has no room for.
// It closes as a menu does: on a choice, a click or tap outside, Escape (the
// keyboard goes back to its button), and when the open session changes.
import { chatMarkdown } from '../chat/export';
import type { ChatState } from '../chat/state';
import { apiUrl } from '../net/api';
import { h } from './dom';

/** What the menu needs of the open session. */
export interface Exportable {
  readonly id: string;
  readonly title: string;
  readonly chat: ChatState;
}

/** The Export menu; `current` gives the open session (none: the menu hides). */
export class ExportMenu {
  readonly root: HTMLDetailsElement;
  private readonly events: HTMLAnchorElement;
  private readonly recording: HTMLAnchorElement;
  /** Phones only (CSS): the top bar has no room for its own Replay link. */
  private readonly replay: HTMLAnchorElement;
  /** The session the menu's links are for. */
  private shownId: string | undefined;

  constructor(private readonly current: () => Exportable | null) {
    // A chosen item closes the menu, as the chat item does.
    const close = (): void => { this.root.open = false; };
    this.events = h('a', { class: 'export-item', role: 'menuitem', onclick: close }, 'Events (NDJSON)');
    this.recording = h('a', { class: 'export-item', role: 'menuitem', onclick: close }, 'Terminal recording (.cast)');
    const chat = h('button', { type: 'button', class: 'export-item', role: 'menuitem', onclick: () => { this.saveChat(); } }, 'Chat (Markdown)');
    this.replay = h('a', { class: 'export-item export-replay', role: 'menuitem', onclick: close }, 'Replay in the browser');
    const summary = h('summary', { class: 'btn btn-quiet' }, 'Export');
    this.root = h('details', { class: 'export-menu', hidden: true }, summary, h('div', { class: 'export-list', role: 'menu' }, this.events, chat, this.recording, this.replay));
    // Listening only while open: a closed menu costs nothing.
    const outside = (ev: Event): void => {
      if (ev.target instanceof Node && this.root.contains(ev.target)) return;
      this.close();
    };
    const escape = (ev: KeyboardEvent): void => {
      if (ev.key !== 'Escape') return;
      ev.preventDefault();
      this.close();
      summary.focus();
    };
    this.root.addEventListener('toggle', () => {
      if (this.root.open) {
        document.addEventListener('pointerdown', outside, true);
        document.addEventListener('focusin', outside, true);
        document.addEventListener('keydown', escape, true);
      } else {
        document.removeEventListener('pointerdown', outside, true);
        document.removeEventListener('focusin', outside, true);
        document.removeEventListener('keydown', escape, true);
      }
    });
  }

  /** Closes the menu. */
  close(): void {
    this.root.open = false;
  }

  /** Follows the open session. */
  update(): void {
    const s = this.current();
    // Asked again at each board tick: its links change only with the session.
    if (s !== null && s.id === this.shownId && !this.root.hidden) return;
    // Another session (or none): what the menu offered was the last one's.
    if (s?.id !== this.shownId) this.close();
    this.shownId = s?.id;
    this.root.hidden = s === null;
    if (!s) return;
    const id = encodeURIComponent(s.id);
    this.events.href = apiUrl(`api/sessions/${id}/events`).href;
    this.events.download = `duet-${s.id}.ndjson`;
    this.recording.href = apiUrl(`api/sessions/${id}/recording`).href;
    this.recording.download = `duet-${s.id}.cast`;
    this.replay.href = `#/session/${id}/replay`;
  }

  private saveChat(): void {
    const s = this.current();
    if (!s) return;
    const blob = new Blob([chatMarkdown(s.chat, s.title)], { type: 'text/markdown' });
    const a = h('a', { href: URL.createObjectURL(blob), download: `duet-${s.id}.md` });
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); }, 10_000);
    this.root.open = false;
  }
}
