// One open session: wires its socket to the terminal pane and the chat state.
// Server messages go through the pure reducer (chat/state.ts); binary frames
// go to the terminal; user intents go out over the socket, or over REST while
// the socket is down. Rendering is batched to one per animation frame, so a
// burst of deltas costs one layout.
import type { ClientMessage, ExitInfo, ServerMessage } from './generated/protocol';
import { ChatView } from './chat/view';
import { initialChatState, reduce, type ChatInput, type ChatState } from './chat/state';
import { api, ApiError } from './net/api';
import { SessionSocket, type SocketState } from './net/socket';
import { TerminalPane } from './terminal/terminal';
import type { ThemeName } from './ui/theme';

/** What a session needs from the app around it. */
export interface SessionHost {
  /** Whether a profile has the chat sidecar (unknown profiles: assume yes). */
  hasSidecar(profile: string): boolean;
  /** The connection changed (for the banner). */
  connection(id: string, s: SocketState): void;
  /** The session's status line changed (for the sidebar). */
  changed(id: string): void;
}

/** Chat states of sessions this tab has shown, so switching back resumes instead of replaying. */
const cache = new Map<string, ChatState>();

/** One attached session. */
export class SessionController {
  readonly chat: ChatView;
  readonly terminal: TerminalPane;
  private state: ChatState;
  private readonly socket: SessionSocket;
  private profile: string | undefined;
  private counter = 0;
  private frame = 0;
  /** The current connection got its hello. */
  private hello = false;
  /** Set between a `resync` and the snapshot frame that follows it. */
  private expectSnapshot = false;

  constructor(
    readonly id: string,
    private readonly host: SessionHost,
    theme: ThemeName,
  ) {
    this.state = cache.get(id) ?? initialChatState;
    this.chat = new ChatView({
      onSubmit: (text) => this.submit(text),
      onApprove: (requestId, allowed) => { this.approve(requestId, allowed); },
      onCancel: () => { this.send({ type: 'cancel' }); },
    });
    this.terminal = new TerminalPane(
      {
        // Nothing reads input once the program has exited; don't provoke an error per keystroke.
        input: (data) => { if (!this.state.exit) this.socket.sendBytes(data); },
        resize: (cols, rows) => { if (!this.state.exit) this.send({ type: 'resize', cols, rows }); },
        flow: (pause) => { this.send({ type: pause ? 'pause' : 'resume' }); },
      },
      theme,
    );
    this.socket = new SessionSocket(id, {
      message: (m) => { this.onMessage(m); },
      binary: (data) => {
        this.expectSnapshot = false;
        this.terminal.write(data);
      },
      state: (s) => {
        if (s.kind !== 'open') this.hello = false;
        this.host.connection(id, s);
        this.scheduleRender();
      },
      resumeFrom: () => this.state.lastSeq,
      diagnose: () => this.diagnose(),
    });
  }

  /** Starts the terminal and the connection; the panes must be in the document. */
  start(): void {
    this.terminal.mount();
    this.render();
    this.socket.start();
  }

  /** The current chat state (read-only; for the sidebar and debugging). */
  get chatState(): ChatState {
    return this.state;
  }

  /** The socket is open and greeted. */
  get greeted(): boolean {
    return this.hello && this.socket.state.kind === 'open';
  }

  /** Whether this session's program has a chat view (a sidecar). */
  get hasChat(): boolean {
    return this.profile === undefined || this.host.hasSidecar(this.profile);
  }

  /** The connection. */
  get connection(): SocketState {
    return this.socket.state;
  }

  /** The page is going into the back/forward cache. */
  suspend(): void {
    this.socket.suspend();
  }

  /** The page came back from the back/forward cache, or the user asked to retry. */
  resume(): void {
    this.socket.retryNow();
  }

  /** Detaches; the chat state is kept for a later return to this session. */
  dispose(): void {
    cancelAnimationFrame(this.frame);
    cache.set(this.id, this.state);
    this.socket.stop();
    this.terminal.dispose();
    this.chat.root.remove();
    this.terminal.root.remove();
  }

  private onMessage(m: ServerMessage): void {
    switch (m.type) {
      case 'hello':
        this.profile = m.profile;
        if (m.last_seq < this.state.lastSeq) {
          // The server's event log is shorter than what we have: it is a
          // different run (state dir wiped). Start over from its beginning.
          this.state = initialChatState;
          this.dispatch(m);
          this.socket.start();
          return;
        }
        this.terminal.serverResized(m.cols, m.rows);
        this.terminal.connected();
        this.hello = true;
        break;
      case 'resync':
        this.terminal.resync(m.cols, m.rows);
        this.expectSnapshot = true;
        return;
      case 'resize':
        this.terminal.serverResized(m.cols, m.rows);
        return;
      case 'exit':
        // Say so in the terminal too: a terminal-only profile has no status line.
        if (!this.expectSnapshot && !this.state.exit) this.terminal.write(new TextEncoder().encode(`\r\n\x1b[2m[${exitText(m)}]\x1b[0m\r\n`));
        break;
      default:
        break;
    }
    this.dispatch(m);
  }

  private dispatch(input: ChatInput): void {
    const next = reduce(this.state, input);
    if (next === this.state) return;
    this.state = next;
    this.scheduleRender();
  }

  private scheduleRender(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    this.chat.render(this.state, {
      sidecar: this.hasChat,
      connected: this.socket.state.kind === 'open',
    });
    this.host.changed(this.id);
  }

  private nextId(prefix: string): string {
    this.counter++;
    return `${prefix}${this.counter}`;
  }

  private send(msg: ClientMessage): boolean {
    return this.socket.send(msg);
  }

  private submit(text: string): boolean {
    const id = this.nextId('s');
    this.dispatch({ type: 'local_submit', id, text });
    if (this.send({ type: 'submit', text, id })) return true;
    // The socket is down: REST carries it, and the answer plays the ack's role.
    api.submit(this.id, text).then(
      (r) => { this.dispatch({ type: 'ack', id, queued: r.queued }); },
      (err: unknown) => { this.dispatch({ type: 'error', code: 'internal', message: errorText(err), id }); },
    );
    return true;
  }

  private approve(requestId: string, allowed: boolean): void {
    this.dispatch({ type: 'local_approve', requestId });
    if (this.send({ type: 'approve', request_id: requestId, allowed, id: this.nextId('a') })) return;
    api.approve(this.id, requestId, allowed).catch((err: unknown) => {
      this.dispatch({ type: 'error', code: 'internal', message: errorText(err), id: requestId });
    });
  }

  private async diagnose(): Promise<'gone' | 'unauthorized' | 'retry'> {
    try {
      await api.session(this.id);
      return 'retry';
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return 'gone';
      if (err instanceof ApiError && err.status === 401) return 'unauthorized';
      return 'retry';
    }
  }

  /** Debugging aid (and the browser tests' window into the terminal). */
  debug(): { terminalText: () => string; state: () => ChatState; flow: () => { backlog: number; peak: number; pauses: number }; dropConnection: () => void; snapshotPending: () => boolean } {
    return {
      terminalText: () => this.terminal.text(),
      state: () => this.state,
      flow: () => this.terminal.flow,
      dropConnection: () => { this.socket.simulateDrop(); },
      snapshotPending: () => this.expectSnapshot,
    };
  }
}

function exitText(e: ExitInfo): string {
  if (e.signal !== undefined) return `the program was ended by ${e.signal}`;
  return `the program exited with code ${e.code ?? '?'}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : 'request failed';
}
