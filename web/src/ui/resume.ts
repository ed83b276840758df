// A "Resume" button for an ended session whose conversation the agent can
// pick up again. The request's failure is this button's own business: it is
// shown next to the button (never as a message from the server's stream),
// and cleared by the next attempt.
import { h } from './dom';

/** Starts the resumed session; rejects with an Error whose message is shown. */
export type ResumeAction = () => Promise<void>;

/** The button and the place for its error. */
export class ResumeControl {
  readonly root: HTMLElement;
  private readonly button: HTMLButtonElement;
  private readonly error: HTMLElement;
  private busy = false;

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
    this.error = h('span', { class: 'resume-error', role: 'alert', hidden: true });
    this.root = h('span', { class: 'resume-control' }, this.button, this.error);
  }

  /** Shows or hides the whole control. */
  set visible(v: boolean) {
    this.root.hidden = !v;
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
