// One session's WebSocket, kept alive: reconnects with backoff and jitter,
// resumes with `from=<last seq seen>` (asked of the owner on every attempt, so
// nothing is lost or repeated), pings to notice dead links, and can be
// suspended for the back/forward cache and resumed. A server that closes with
// 1001 Going Away is shutting down: the state says so until it is back.
import type { ClientMessage, ServerMessage } from '../generated/protocol';
import { apiUrl } from './api';
import { backoffDelay } from './backoff';
import { parseServerMessage } from './guards';
import { deviceName } from '../ui/device';

/** Where the connection stands. */
export type SocketState =
  | { readonly kind: 'connecting'; readonly attempt: number; readonly serverStopped: boolean }
  | { readonly kind: 'open' }
  | { readonly kind: 'waiting'; readonly attempt: number; readonly retryAt: number; readonly serverStopped: boolean }
  | { readonly kind: 'closed'; readonly reason: 'stopped' | 'suspended' | 'ended' | 'gone' | 'unauthorized' };

/** What the socket tells its owner. */
export interface SocketOwner {
  message(msg: ServerMessage): void;
  binary(data: Uint8Array): void;
  state(s: SocketState): void;
  /** The last event seq the owner has applied; the next connection resumes after it. */
  resumeFrom(): number;
  /**
   * After a connection failed before its hello: should we stop trying?
   * (The session was deleted, or the cookie is no longer valid.)
   */
  diagnose(): Promise<'gone' | 'unauthorized' | 'retry'>;
}

/** Ping this often while open, in ms. */
const PING_EVERY = 15_000;
/** Silence longer than this means the link is dead, in ms. */
const SILENCE_LIMIT = 40_000;

/** The close code of a server that is shutting down (duet sends it on SIGTERM). */
const GOING_AWAY = 1001;

/** A self-healing connection to `GET /api/sessions/{id}/ws`. */
export class SessionSocket {
  private ws: WebSocket | null = null;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private pingTimer: ReturnType<typeof setInterval> | undefined;
  private lastHeard = 0;
  private greeted = false;
  /** The server closed with GOING_AWAY and has not greeted us since. */
  private serverStopped = false;
  /** No reconnects: stopped by the owner, suspended, or the program ended. */
  private halted: SocketState | null = null;
  private current: SocketState = { kind: 'closed', reason: 'stopped' };

  constructor(
    private readonly sessionId: string,
    private readonly owner: SocketOwner,
  ) {}

  /** The current state. */
  get state(): SocketState {
    return this.current;
  }

  /** Connects (again), resetting the backoff. */
  start(): void {
    this.halted = null;
    this.attempt = 0;
    this.connect();
  }

  /** Closes for good (the owner is going away). */
  stop(): void {
    this.halt({ kind: 'closed', reason: 'stopped' });
  }

  /** Closes for now (the page is entering the back/forward cache); `start()` resumes. */
  suspend(): void {
    this.halt({ kind: 'closed', reason: 'suspended' });
  }

  /** Reconnects at once if waiting (the network came back, the user clicked "retry"). */
  retryNow(): void {
    if (this.current.kind === 'waiting' || (this.current.kind === 'closed' && this.current.reason === 'suspended')) this.start();
  }

  /** Closes the link as a network failure would (the retry logic runs); for tests and debugging. */
  simulateDrop(): void {
    this.ws?.close(4000, 'simulated drop');
  }

  /** Sends a JSON message; false when the socket is not open. */
  send(msg: ClientMessage): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Sends terminal input; false when the socket is not open. */
  sendBytes(data: Uint8Array): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(data);
    return true;
  }

  private connect(): void {
    clearTimeout(this.retryTimer);
    this.dropSocket();
    this.greeted = false;
    const url = apiUrl(`api/sessions/${encodeURIComponent(this.sessionId)}/ws`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const from = this.owner.resumeFrom();
    if (from > 0) url.searchParams.set('from', String(from));
    // How the session's other clients tell this one apart.
    url.searchParams.set('device', deviceName());
    this.setState({ kind: 'connecting', attempt: this.attempt, serverStopped: this.serverStopped });

    const ws = new WebSocket(url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      this.lastHeard = Date.now();
      this.setState({ kind: 'open' });
      this.pingTimer = setInterval(() => { this.heartbeat(); }, PING_EVERY);
    };
    ws.onmessage = (ev: MessageEvent<unknown>) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      if (ev.data instanceof ArrayBuffer) {
        this.owner.binary(new Uint8Array(ev.data));
        return;
      }
      if (typeof ev.data !== 'string') return;
      const msg = parseServerMessage(ev.data);
      if (!msg) return;
      if (msg.type === 'hello') {
        this.greeted = true;
        this.serverStopped = false;
        this.attempt = 0;
        if (msg.exit) this.halted = { kind: 'closed', reason: 'ended' };
      } else if (msg.type === 'exit') {
        // No output or events will follow: when the server closes, stay closed.
        this.halted = { kind: 'closed', reason: 'ended' };
      }
      this.owner.message(msg);
    };
    ws.onclose = (ev: CloseEvent) => {
      if (ws !== this.ws) return;
      if (ev.code === GOING_AWAY) this.serverStopped = true;
      this.dropSocket();
      void this.afterClose();
    };
  }

  private async afterClose(): Promise<void> {
    // An ended program stays ended, but a server going away is news: say so,
    // and come back when it does (the session is listed again, ended, and
    // perhaps resumable). Ending it is what the server did on its way out.
    if (this.halted && !this.serverStopped) {
      this.setState(this.halted);
      return;
    }
    this.halted = null;
    if (!this.greeted) {
      // The upgrade failed or the server hung up before greeting us: find out why.
      const verdict = await this.owner.diagnose();
      // stop()/suspend() may have run while we waited.
      if (this.isHalted()) return;
      if (verdict !== 'retry') {
        this.halt({ kind: 'closed', reason: verdict });
        return;
      }
    }
    const delay = backoffDelay(this.attempt);
    this.attempt++;
    this.setState({ kind: 'waiting', attempt: this.attempt, retryAt: Date.now() + delay, serverStopped: this.serverStopped });
    this.retryTimer = setTimeout(() => { this.connect(); }, delay);
  }

  private isHalted(): boolean {
    return this.halted !== null;
  }

  private heartbeat(): void {
    if (Date.now() - this.lastHeard > SILENCE_LIMIT) {
      // A half-open link (sleep, NAT timeout): close it and let the retry logic run.
      this.ws?.close();
      return;
    }
    this.send({ type: 'ping' });
  }

  private halt(state: SocketState): void {
    this.halted = state;
    clearTimeout(this.retryTimer);
    this.dropSocket();
    this.setState(state);
  }

  private dropSocket(): void {
    clearInterval(this.pingTimer);
    const ws = this.ws;
    if (!ws) return;
    this.ws = null;
    ws.onopen = null;
    ws.onmessage = null;
    ws.onclose = null;
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(1000);
  }

  private setState(s: SocketState): void {
    this.current = s;
    this.owner.state(s);
  }
}
