// The banner under the top bar while the open session's connection is down:
// reconnecting (with a countdown and "Retry now" while it waits), the
// server stopped, the session gone, paused in the background. Nothing while
// the connection is up or the session ended on its own.
import type { SocketState } from '../net/socket';
import { h } from './dom';

/** The connection banner; `retry` reconnects now, `unauthorized` asks for the token again. */
export class ConnectionBanner {
  readonly root: HTMLElement;
  private readonly text: HTMLElement;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(retry: () => void, private readonly unauthorized: () => void) {
    this.text = h('span', {});
    this.root = h('div', { class: 'banner', role: 'alert', hidden: true }, this.text, h('button', { type: 'button', class: 'btn btn-quiet', onclick: retry }, 'Retry now'));
  }

  /** Shows what `state` means for the reader (null: no session, nothing to say). */
  show(state: SocketState | null): void {
    clearInterval(this.timer);
    const say = (text: string | null, retry: boolean): void => {
      this.root.hidden = text === null;
      this.text.textContent = text ?? '';
      this.root.dataset.retry = String(retry);
    };
    if (!state) {
      say(null, false);
      return;
    }
    switch (state.kind) {
      case 'open':
        say(null, false);
        return;
      case 'connecting':
        say(state.attempt > 0 ? (state.serverStopped ? 'The server stopped — reconnecting…' : 'Disconnected — reconnecting…') : null, false);
        return;
      case 'waiting': {
        const tick = (): void => {
          const secs = Math.max(0, Math.ceil((state.retryAt - Date.now()) / 1000));
          say(state.serverStopped
            ? `The server stopped (shut down or restarting) — reconnecting in ${secs} s.`
            : `Disconnected from the server — reconnecting in ${secs} s. The chat and terminal resume where they left off.`, true);
        };
        tick();
        this.timer = setInterval(tick, 1000);
        return;
      }
      case 'closed':
        switch (state.reason) {
          case 'gone':
            say('This session no longer exists.', false);
            return;
          case 'unauthorized':
            this.unauthorized();
            return;
          case 'suspended':
            say('Paused while the page was in the background.', true);
            return;
          case 'ended':
          case 'stopped':
            say(null, false);
            return;
        }
    }
  }
}
