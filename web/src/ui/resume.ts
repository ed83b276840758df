// A "Resume" button for an ended session whose conversation the agent can
// pick up again, or, once another session resumed it, a link to that one
// (where the conversation goes on): resuming it twice would fork it, and the
// server refused while the copy ran. The request's failure is this button's
// own business: it is shown next to the button (never as a message from the
// server's stream), cleared by the next attempt, and gone once the session
// was resumed.
import type { SessionInfo } from '../generated/protocol';
import { h } from './dom';

/** Starts the resumed session; rejects with an Error whose message is shown. */
export type ResumeAction = () => Promise<void>;

/** The button, the link to the resumed session, and the place for the button's error. */
export class ResumeControl {
  readonly root: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly link: HTMLAnchorElement;
  private readonly error: HTMLElement;
  private busy = false;
  private shown = false;
  private successor: string | undefined;

  constructor(private readonly action: ResumeAction, label = 'Resume') {
    this.button = h(
      'button',
      {
        type: 'button',
        class: 'btn btn-primary resume',
        title: 'Start this conversation again in a new session',
        onclick: (ev: Event) => {
          ev.stopPropagation();
          void this.run();
        },
      },
      label,
    );
    this.link = h('a', { class: 'btn resume-open', hidden: true, title: 'This conversation goes on in the session that resumed it' }, 'Open resumed session');
    this.error = h('span', { class: 'resume-error', role: 'alert', hidden: true });
    this.root = h('span', { class: 'resume-control' }, this.button, this.link, this.error);
  }

  /** Shows or hides the whole control. */
  set visible(v: boolean) {
    this.shown = v;
    this.sync();
  }

  /** The session that resumed this one (the end of the chain), if any: the control leads there instead. */
  set resumedBy(id: string | undefined) {
    if (id === this.successor) return;
    this.successor = id;
    if (id !== undefined) {
      this.link.href = `#/session/${encodeURIComponent(id)}`;
      // The conversation went on: an earlier refusal is no longer the case.
      this.showError(undefined);
    }
    this.sync();
  }

  private sync(): void {
    this.root.hidden = !this.shown && this.successor === undefined;
    this.button.hidden = this.successor !== undefined;
    this.link.hidden = this.successor === undefined;
  }

  private async run(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.button.disabled = true;
    this.button.setAttribute('aria-busy', 'true');
    this.showError(undefined);
    try {
      await this.action();
    } catch (err) {
      this.showError(`Could not resume: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.busy = false;
      this.button.disabled = false;
      this.button.removeAttribute('aria-busy');
    }
  }

  private showError(message: string | undefined): void {
    this.error.hidden = message === undefined;
    this.error.textContent = message ?? '';
  }
}

/** Where a resumed conversation went on: `resumed_by`, followed to the newest session of the chain. */
export function latestResumption(id: string, find: (id: string) => Pick<SessionInfo, 'resumed_by'> | undefined): string | undefined {
  let next = find(id)?.resumed_by;
  let last: string | undefined;
  // A chain is short; the bound only guards against a cycle in bad data.
  for (let i = 0; next !== undefined && next !== id && i < 100; i++) {
    last = next;
    next = find(next)?.resumed_by;
  }
  return last;
}
