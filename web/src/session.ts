// One open session: wires its socket to the terminal pane and the chat state.
// Server messages go through the pure reducer (chat/state.ts); binary frames
// go to the terminal; user intents go out over the socket, or over REST while
// the socket is down. Rendering is batched to one per animation frame, so a
// burst of deltas costs one layout.
import type { ApprovalDecision, ChannelInfo, ClientMessage, ConnectedClient, Role, ServerMessage, SessionInfo } from './generated/protocol';
import { ChatView, exitSentence, type ApprovalChoice } from './chat/view';
import { exitTone } from './chat/exit';
import { historySegments, type HistorySegment } from './chat/history';
import { initialChatState, reduce, type ChatInput, type ChatState } from './chat/state';
import { api, ApiError } from './net/api';
import { fetchBacklog, HeldEvents } from './net/backlog';
import { SessionSocket, type SocketState } from './net/socket';
import { TerminalPane, type ScreenDump } from './terminal/terminal';
import { h } from './ui/dom';
import { onDeviceName } from './ui/device';
import { ResumeControl } from './ui/resume';
import { canDrive, isHeadless } from './ui/roles';
import { KeysNote } from './ui/keys-note';
import { PresenceBar } from './ui/share';
import type { ThemeName } from './ui/theme';

/** What a session needs from the app around it. */
export interface SessionHost {
  /** The profile's side channel, when the profile is known. */
  profileChannel(profile: string): ChannelInfo | undefined;
  /** The session as the last poll saw it (channel, resumable, …). */
  info(id: string): SessionInfo | undefined;
  /** Show the terminal and give it the keyboard. */
  showTerminal(): void;
  /** Take the keyboard out of the terminal (to the composer, else the top bar). */
  leaveTerminal(): void;
  /** Resume the ended session `id` and open the new one; rejects with the reason. */
  resume(id: string): Promise<void>;
  /** The connection changed (for the banner). */
  connection(id: string, s: SocketState): void;
  /** The session's status line changed (for the sidebar). */
  changed(id: string): void;
  /** The newest session that resumed `id` (where its conversation goes on), if any. */
  resumedBy(id: string): string | undefined;
}

/** A history of at most this many events is replayed by the socket (over HTTP it would cost a round trip first). */
const SHORT_HISTORY = 200;
/** The longest the chat waits for a replay to arrive whole before drawing what it has, in ms. */
const BACKLOG_WAIT_MS = 3000;

/** Chat states of sessions this tab has shown, so switching back resumes instead of replaying. */
const cache = new Map<string, ChatState>();

/** One attached session. */
export class SessionController {
  readonly chat: ChatView;
  readonly terminal: TerminalPane;
  private state: ChatState;
  private readonly socket: SessionSocket;
  private profile: string | undefined;
  /** The side channel, as the hello said. */
  private channel: ChannelInfo | undefined;
  /** The banner over the terminal once the program has exited. */
  private readonly exitBanner: HTMLElement;
  private readonly exitBannerText: HTMLElement;
  private readonly bannerResume: ResumeControl;
  private bannerDismissed = false;
  private counter = 0;
  /** The earlier conversation of a resumed session: read once (it never changes). */
  private history: readonly HistorySegment[] = [];
  private historyAsked = false;
  private frame = 0;
  /**
   * The seq the hello said the log had reached, while the replay up to it is
   * still arriving: the chat is drawn once it is all reduced (or after
   * BACKLOG_WAIT_MS), not frame by frame as it grows (each of those frames
   * laid out the whole growing log).
   */
  private backlogUntil = 0;
  private backlogTimer: ReturnType<typeof setTimeout> | undefined;
  /** The socket's events while the history fetched over HTTP is on its way (net/backlog.ts). */
  private readonly held = new HeldEvents();
  private disposed = false;
  /** The current connection got its hello. */
  private hello = false;
  /** Some connection got its hello: a drop now is a reconnect. */
  private everGreeted = false;
  private readonly unwatchDevice: () => void;
  /** Set between a `resync` and the snapshot frame that follows it. */
  private expectSnapshot = false;
  /** This tab started the session: its first connection sets the PTY size. */
  private drivesFirst: boolean;
  /** This connection's role and principal (from the hello). */
  private role: Role | undefined;
  private principal: string | undefined;
  private clientId: number | undefined;
  /** Who is attached (hello, then `clients`). */
  private clients: ConnectedClient[] = [];
  /** What `infoChanged` last drew of the session's listing. */
  private infoShown = '';
  private readonly presence: PresenceBar;
  /** Over the terminal for roles that cannot type and for headless agents. */
  private readonly keysNote = new KeysNote();

  constructor(
    readonly id: string,
    private readonly host: SessionHost,
    theme: ThemeName,
    created = false,
  ) {
    this.drivesFirst = created;
    this.state = cache.get(id) ?? initialChatState;
    this.chat = new ChatView({
      onSubmit: (text) => this.submit(text),
      onApprove: (requestId, choice) => { this.approve(requestId, choice); },
      onCancel: () => { this.send({ type: 'cancel' }); },
      onShowTerminal: () => { this.host.showTerminal(); },
      onResume: () => this.host.resume(this.id),
      onDiscard: (id) => { this.discard(id); },
      onSetMode: (mode) => api.setMode(this.id, mode),
      onSetModel: (model) => api.setModel(this.id, model),
      draftKey: `duet.draft.${id}`,
    });
    this.terminal = new TerminalPane(
      {
        // Nothing reads input once the program has exited; don't provoke an error per keystroke.
        input: (data) => {
          if (!this.takesKeys()) {
            // Keys are ignored for viewers and approvers, and a headless agent
            // has no terminal to type into; say so instead.
            this.showKeysNote();
            return;
          }
          if (!this.state.exit) this.socket.sendBytes(data);
        },
        resize: (cols, rows) => { if (!this.state.exit && canDrive(this.role)) this.send({ type: 'resize', cols, rows }); },
        flow: (pause) => { this.send({ type: pause ? 'pause' : 'resume' }); },
        leave: () => { this.host.leaveTerminal(); },
      },
      theme,
    );
    this.exitBannerText = h('span', { class: 'term-banner-text' });
    this.bannerResume = new ResumeControl(() => this.host.resume(this.id));
    const dismiss = h('button', { type: 'button', class: 'btn btn-quiet dismiss', 'aria-label': 'Dismiss', title: 'Dismiss', onclick: () => { this.bannerDismissed = true; this.render(); } }, '✕');
    this.exitBanner = h('div', { class: 'term-banner', role: 'status', hidden: true }, this.exitBannerText, this.bannerResume.root, dismiss);
    this.terminal.root.append(this.exitBanner);
    this.terminal.addNote(this.keysNote.root);
    this.presence = new PresenceBar(id);
    this.chat.root.insertBefore(this.presence.root, this.chat.root.children[1] ?? null);
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
      resumeFrom: () => Math.max(this.state.lastSeq, this.held.upTo),
      diagnose: () => this.diagnose(),
    });
    // A new device name reaches the other clients with the next connection.
    this.unwatchDevice = onDeviceName(() => { if (this.socket.state.kind === 'open') this.socket.start(); });
  }

  /** Whether keystrokes go to the program: a role that may drive, and a program with a terminal. */
  private takesKeys(): boolean {
    return canDrive(this.role) && !isHeadless(this.channelInfo?.kind);
  }

  private showKeysNote(): void {
    this.keysNote.show(isHeadless(this.channelInfo?.kind));
  }

  /** Starts the terminal and the connection; the panes must be in the document. */
  start(): void {
    this.terminal.mount();
    this.render();
    // A session this tab has no state for (and did not just start), unless it is known to be
    // short: its history comes over HTTP, in one answer, rather than a message per event.
    const known = this.host.info(this.id)?.last_seq;
    if (this.state.lastSeq === 0 && !this.drivesFirst && (known === undefined || known > SHORT_HISTORY)) void this.loadBacklog();
    else this.socket.start();
  }

  /**
   * Fetches the history over HTTP and connects the socket from where it
   * ends as soon as that is known; the socket's events wait for it. Without
   * it (an error, a broken answer) the socket replays it all, as before.
   */
  private async loadBacklog(): Promise<void> {
    const backlog = await fetchBacklog(this.id);
    if (this.disposed) return;
    if (!backlog) {
      this.socket.start();
      return;
    }
    const generation = this.held.begin(backlog.lastSeq);
    this.socket.start();
    const events = await backlog.events.catch(() => undefined);
    const held = this.held.finish(generation);
    // Disposed meanwhile, or the server turned out to be another run (see the hello): not these.
    if (!held) return;
    if (!events) {
      // The body broke off: connect again from what this tab has; the socket replays the rest.
      this.socket.start();
      return;
    }
    // The reducer skips what it has seen (a socket that connected again may have sent some twice).
    for (const m of events) this.dispatch(m);
    for (const m of held) this.onMessage(m);
  }

  /** The current chat state (read-only; for the sidebar and debugging). */
  get chatState(): ChatState {
    return this.state;
  }

  /** The socket is open and greeted. */
  get greeted(): boolean {
    return this.hello && this.socket.state.kind === 'open';
  }

  /** The session's side channel: the hello's word, else the last poll's, else the profile's. */
  get channelInfo(): ChannelInfo | undefined {
    const profile = this.profile ?? this.host.info(this.id)?.profile;
    return this.channel ?? this.host.info(this.id)?.channel ?? (profile !== undefined ? this.host.profileChannel(profile) : undefined);
  }

  /** Whether this session's program has a chat view (its channel carries events; unknown: yes). */
  get hasChat(): boolean {
    return this.channelInfo?.events ?? true;
  }

  /** New poll results for this session (e.g. it became resumable). */
  infoChanged(): void {
    // The board ticks with each second of terminal output (every keystroke's
    // echo is output): redraw only when what the view shows of it changed.
    const shown = JSON.stringify([this.host.info(this.id), this.host.resumedBy(this.id)]);
    if (shown === this.infoShown) return;
    this.infoShown = shown;
    this.scheduleRender();
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
    this.disposed = true;
    this.held.cancel();
    cancelAnimationFrame(this.frame);
    clearTimeout(this.backlogTimer);
    cache.set(this.id, this.state);
    this.socket.stop();
    this.unwatchDevice();
    this.terminal.dispose();
    this.chat.root.remove();
    this.terminal.root.remove();
  }

  private onMessage(m: ServerMessage): void {
    if (this.held.hold(m)) return;
    switch (m.type) {
      case 'hello':
        this.profile = m.profile;
        this.channel = m.channel;
        this.role = m.role;
        this.principal = m.principal;
        this.clientId = m.client_id;
        this.clients = m.clients;
        this.terminal.setMayDrive(canDrive(m.role));
        if (this.takesKeys()) this.keysNote.hide();
        else this.showKeysNote();
        this.terminal.root.dataset.headless = String(isHeadless(m.channel.kind));
        this.root().dataset.role = m.role;
        if (m.last_seq < this.state.lastSeq) {
          // The server's event log is shorter than what we have: it is a
          // different run (state dir wiped). Start over from its beginning.
          this.state = initialChatState;
          this.held.cancel();
          this.dispatch(m);
          this.socket.start();
          return;
        }
        this.awaitBacklog(m.last_seq);
        this.terminal.serverResized(m.cols, m.rows);
        this.terminal.connected(this.drivesFirst);
        this.drivesFirst = false;
        this.hello = true;
        this.everGreeted = true;
        break;
      case 'resync':
        this.terminal.resync(m.cols, m.rows);
        this.expectSnapshot = true;
        return;
      case 'resize':
        this.terminal.serverResized(m.cols, m.rows);
        return;
      case 'clients':
        this.clients = m.clients;
        this.scheduleRender();
        return;
      case 'error': {
        // A refused prompt goes back into the box; the log says why.
        const refused = m.id === undefined ? undefined : this.state.pending.find((p) => p.id === m.id);
        if (refused) this.chat.restoreDraft(refused.text);
        break;
      }
      case 'exit':
        // Say so in the terminal too: a terminal-only profile has no status line.
        if (!this.expectSnapshot && !this.state.exit) this.terminal.write(new TextEncoder().encode(`\r\n\x1b[2m[${lowerFirst(exitSentence(m))}]\x1b[0m\r\n`));
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

  /** Holds the chat's drawing until the replay reaches `lastSeq` (see `backlogUntil`). */
  private awaitBacklog(lastSeq: number): void {
    clearTimeout(this.backlogTimer);
    if (lastSeq <= this.state.lastSeq) {
      this.backlogUntil = 0;
      return;
    }
    this.backlogUntil = lastSeq;
    // While it arrives the page mostly waits on the network: the chat gets its first drawing ready.
    setTimeout(() => { this.chat.prepare(); }, 0);
    // A replay that stalls (a slow link) still shows what came so far.
    this.backlogTimer = setTimeout(() => { this.endBacklog(); }, BACKLOG_WAIT_MS);
  }

  private endBacklog(): void {
    clearTimeout(this.backlogTimer);
    this.backlogUntil = 0;
    this.scheduleRender();
  }

  private scheduleRender(): void {
    if (this.backlogUntil !== 0) {
      if (this.state.lastSeq < this.backlogUntil && this.socket.state.kind === 'open') return;
      this.endBacklog();
      return;
    }
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  private render(): void {
    const info = this.host.info(this.id);
    const resumable = info?.resumable ?? false;
    const resumedBy = this.host.resumedBy(this.id);
    const down = this.socket.state.kind === 'connecting' || this.socket.state.kind === 'waiting';
    if (info?.resumed_from !== undefined && !this.historyAsked) this.loadHistory();
    this.chat.render(this.state, {
      channel: this.channelInfo,
      connected: this.socket.state.kind === 'open',
      resumable,
      resumedFrom: info?.resumed_from,
      history: this.history,
      role: this.role,
      resumedBy,
      reconnecting: this.everGreeted && down,
      usage: info?.usage,
      budget: info?.budget,
    });
    this.presence.render(this.clients, this.clientId, this.role, this.principal);
    // Where terminal users look: a banner over the terminal once the program ended.
    const exit = this.state.exit;
    this.exitBanner.hidden = exit === null || this.bannerDismissed;
    if (exit) {
      const text = `${exitSentence(exit)}.`;
      if (this.exitBannerText.textContent !== text) this.exitBannerText.textContent = text;
      this.exitBanner.dataset.success = String(exit.success);
      this.exitBanner.dataset.tone = exitTone(exit);
    }
    this.bannerResume.visible = exit !== null && resumable;
    this.bannerResume.resumedBy = resumedBy;
    this.host.changed(this.id);
  }

  private loadHistory(): void {
    this.historyAsked = true;
    api.history(this.id).then(
      (text) => {
        this.history = historySegments(text);
        this.scheduleRender();
      },
      (err: unknown) => {
        this.dispatch({ type: 'local_notice', level: 'warning', text: `The earlier conversation could not be loaded: ${errorText(err)}` });
      },
    );
  }

  /** The chat pane's root (carries `data-role` for styles and tests). */
  private root(): HTMLElement {
    return this.chat.root;
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
      (err: unknown) => { this.dispatch({ type: 'local_failure', target: 'submit', id, message: errorText(err) }); },
    );
    return true;
  }

  /** Lets go of a prompt that was not sent; an unsent one the server keeps goes there too. */
  private discard(id: string): void {
    const p = this.state.pending.find((s) => s.id === id);
    this.dispatch({ type: 'local_discard', id });
    // Socket down: the server still offers it, and the next hello shows it again.
    if (p?.n !== undefined) this.send({ type: 'discard', prompt: p.n, id: this.nextId('d') });
  }

  private approve(requestId: string, choice: ApprovalChoice): void {
    const decision: ApprovalDecision = 'option' in choice ? { option: choice.option } : { allowed: choice.allowed };
    this.dispatch('option' in choice ? { type: 'local_approve', requestId, option: choice.option } : { type: 'local_approve', requestId });
    if (this.send({ type: 'approve', request_id: requestId, ...decision, id: this.nextId('a') })) return;
    // The socket is down: REST carries it; the `approval` broadcast (or the
    // hello's list on reconnect) brings the outcome.
    api.approve(this.id, requestId, decision).catch((err: unknown) => {
      this.dispatch({ type: 'local_failure', target: 'approve', id: requestId, message: errorText(err) });
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
  debug(): { terminalText: () => string; state: () => ChatState; flow: () => { backlog: number; peak: number; pauses: number }; dropConnection: () => void; snapshotPending: () => boolean; screen: () => ScreenDump } {
    return {
      screen: () => this.terminal.screen(),
      terminalText: () => this.terminal.text(),
      state: () => this.state,
      flow: () => this.terminal.flow,
      dropConnection: () => { this.socket.simulateDrop(); },
      snapshotPending: () => this.expectSnapshot,
    };
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : 'request failed';
}
