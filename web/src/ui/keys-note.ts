// The note over the terminal when keystrokes are not sent: a role that may
// not type (viewer, approver), or an agent that runs without a terminal.
import { h } from './dom';

/** How long the "Read only" note stays after the last refused key, in ms. */
const READ_ONLY_MS = 5000;

/** The note; the owner puts `root` over the terminal. */
export class KeysNote {
  readonly root: HTMLElement;
  private readonly text: HTMLElement;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    this.text = h('span', { class: 'term-note-text' });
    this.root = h('div', { class: 'term-note keys-note', role: 'status', hidden: true }, this.text);
  }

  /** Says why keys are not sent: the program has no terminal (`headless`), or this client may only watch. */
  show(headless: boolean): void {
    const text = headless
      ? 'This agent runs without a terminal: keystrokes are not sent. This pane shows its error output and a line per prompt, tool call and turn; write to it in the chat.'
      : 'Read only: your keystrokes are not sent.';
    if (this.text.textContent !== text) this.text.textContent = text;
    this.root.hidden = false;
    // The read-only note sits over the terminal's bottom rows: it goes a
    // while after the last refused key (the headless note explains the pane, and stays).
    clearTimeout(this.timer);
    if (!headless) this.timer = setTimeout(() => { this.root.hidden = true; }, READ_ONLY_MS);
  }

  /** Hides it (keys are sent now). */
  hide(): void {
    clearTimeout(this.timer);
    this.root.hidden = true;
  }
}
