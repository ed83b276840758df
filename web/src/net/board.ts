// The live board: GET /api/sessions/watch as server-sent events. Each
// `sessions` event is the whole list the user may see, what needs attention
// first; the sidebar and the board view draw from it instead of polling.
// EventSource reconnects by itself after a network error; a refusal (401
// after a logout, a revoked share) closes it, and then one REST call tells
// an expired login from a server that is down.
import type { Board } from '../generated/protocol';
import { api, ApiError, apiUrl } from './api';
import { backoffDelay } from './backoff';
import { parseBoard } from './guards';

/** What the feed tells its owner. */
export interface BoardListener {
  board(board: Board): void;
  /** The credentials are no longer good. */
  unauthorized(): void;
  /** The stream is up (a board arrived) or down (it broke; it reconnects by itself). */
  connection?(up: boolean): void;
}

/** See the module comment. */
export class BoardFeed {
  private source: EventSource | null = null;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private attempt = 0;
  private latest: Board | null = null;

  constructor(private readonly listener: BoardListener) {}

  /** The last board received. */
  get board(): Board | null {
    return this.latest;
  }

  /** Opens the stream (again); a no-op while it is open. */
  open(): void {
    clearTimeout(this.retry);
    if (this.source) return;
    const source = new EventSource(apiUrl('api/sessions/watch'), { withCredentials: true });
    source.addEventListener('sessions', (ev: MessageEvent<string>) => {
      const board = parseBoard(ev.data);
      if (!board) return;
      this.attempt = 0;
      this.latest = board;
      this.listener.connection?.(true);
      this.listener.board(board);
    });
    source.addEventListener('error', () => {
      // Reconnecting by itself (CONNECTING) or given up (CLOSED): either way, what was shown may be old.
      if (source === this.source) this.listener.connection?.(false);
      if (source.readyState !== EventSource.CLOSED) return;
      this.source = null;
      void this.diagnose();
    });
    this.source = source;
  }

  /** Closes the stream (the page goes into the back/forward cache). */
  close(): void {
    clearTimeout(this.retry);
    this.source?.close();
    this.source = null;
  }

  private async diagnose(): Promise<void> {
    try {
      await api.sessions();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        this.listener.unauthorized();
        return;
      }
    }
    this.retry = setTimeout(() => { this.open(); }, backoffDelay(this.attempt++));
  }
}
