// The application shell: top bar (layout and theme toggles), the disconnected
// banner, the sessions sidebar and the workspace holding the open session's
// chat and terminal panes, or the board, or a replay: whatever the address
// names (routes.ts), so a reload or a second tab lands on the same one. The
// session list comes from the live board stream.
import type { Board, ProfileInfo, SessionInfo } from './generated/protocol';
import { clearShared, markShared } from './auth';
import { api, ApiError } from './net/api';
import { BoardFeed } from './net/board';
import { hashApproval, hashBoard, hashReplay, hashSession, sessionHash } from './routes';
import { SessionController } from './session';
import { measureNewTerminal } from './terminal/measure';
import { h } from './ui/dom';
import { applyTheme, currentTheme, onSystemThemeChange, type ThemeName } from './ui/theme';
import { Sidebar } from './ui/sidebar';
import { SidebarToggle } from './ui/menu';
import { BoardView } from './ui/board';
import { Notifier } from './notify/notifier';
import { PushControl } from './notify/push';
import { notifySettings } from './ui/notify-settings';
import { ExportMenu } from './ui/export';
import { ReplayView } from './replay/view';
import { chatStatus } from './chat/state';
import { setExitViewer } from './chat/exit';
import { sessionLabel } from './ui/rename';
import { latestResumption } from './ui/resume';
import { ConnectionBanner } from './ui/banner';
import { LayoutSwitch, savedLayout, type Layout } from './ui/layout';

/** The running application. */
export class App {
  readonly root: HTMLElement;
  private readonly sidebar: Sidebar;
  private readonly workspace: HTMLElement;
  private readonly chatSlot: HTMLElement;
  private readonly termSlot: HTMLElement;
  private readonly emptyState: HTMLElement;
  private readonly banner: ConnectionBanner;
  private readonly titleEl: HTMLElement;
  private readonly themeButton: HTMLButtonElement;
  private readonly menu: SidebarToggle;
  private readonly layoutGroup: LayoutSwitch;
  private readonly boardView: BoardView;
  private readonly feed: BoardFeed;
  private readonly notifier = new Notifier((url) => { location.hash = url.hash; });
  private readonly push = new PushControl(() => this.notifier.worker);
  private readonly exportMenu = new ExportMenu(() => (this.session ? { id: this.session.id, title: this.titleEl.textContent || this.session.id, chat: this.session.chatState } : null));
  /** An approval to bring into view once its card is drawn (a notification was clicked). */
  private jumpTo: string | undefined;
  private profiles: ProfileInfo[] = [];
  private session: SessionController | null = null;
  private replayView: ReplayView | null = null;
  /** Over the workspace while a replay is open: its controls. */
  private readonly replaySlot: HTMLElement;
  /** "Replay" for the open session; "Live" back from its replay (in the replay's own bar). */
  private readonly replayLink: HTMLAnchorElement;
  private theme: ThemeName = currentTheme();
  private layout: Layout = savedLayout();

  constructor(private readonly onUnauthorized: () => void) {
    this.sidebar = new Sidebar({
      open: (id) => { this.navigate(id); },
      start: (profile) => this.startSession(profile),
      end: (id) => this.endSession(id),
      purge: (id) => this.purgeSession(id),
      resume: (id) => this.resumeSession(id),
    });
    this.root = h('div', { class: 'app' });
    this.menu = new SidebarToggle(this.root, this.sidebar.root);
    this.titleEl = h('span', { class: 'session-title' });
    this.layoutGroup = new LayoutSwitch((layout) => { this.setLayout(layout); });
    this.themeButton = h('button', { type: 'button', class: 'btn btn-icon theme-toggle', onclick: () => { this.setTheme(this.theme === 'dark' ? 'light' : 'dark', true); } });
    this.replayLink = h('a', { class: 'btn btn-quiet replay-link', hidden: true, title: 'Replay this session: the terminal and the chat at any moment' }, 'Replay');
    const topbar = h('header', { class: 'topbar' }, this.menu.button, h('h1', { class: 'brand' }, 'duet'), this.titleEl, h('span', { class: 'spacer' }), this.layoutGroup.root, this.replayLink, this.exportMenu.root, notifySettings(this.push, () => this.session?.id), this.themeButton);

    this.banner = new ConnectionBanner(() => { this.session?.resume(); }, () => { this.onUnauthorized(); });

    this.chatSlot = h('div', { class: 'slot chat-slot' });
    this.termSlot = h('div', { class: 'slot term-slot' });
    this.emptyState = h('div', { class: 'empty-state' });
    this.boardView = new BoardView({ open: (id) => { this.navigate(id); } });
    this.feed = new BoardFeed({
      board: (b) => { this.onBoard(b); },
      unauthorized: () => { this.onUnauthorized(); },
      connection: (up) => { this.sidebar.setOffline(!up); this.boardView.setOffline(!up); },
    });
    this.workspace = h('main', { class: 'workspace', 'data-layout': this.layout }, this.chatSlot, this.termSlot, this.emptyState, this.boardView.root);
    const scrim = h('div', { class: 'scrim', onclick: () => { this.menu.closeDrawer(); } });
    this.replaySlot = h('div', { class: 'replay-slot', hidden: true });
    this.root.append(topbar, this.banner.root, this.replaySlot, h('div', { class: 'body' }, this.sidebar.root, scrim, this.workspace));
  }

  /** Loads profiles and sessions and opens the session in the hash (or none). */
  async start(): Promise<void> {
    applyTheme(this.theme, false);
    this.setTheme(this.theme, false);
    this.setLayout(this.layout);
    onSystemThemeChange((t) => { this.setTheme(t, false); });
    try {
      // A share link sees its one session and no profiles: ask who this is
      // first, rather than learn it from a refused request.
      const me = await api.me();
      // An end this principal asked for reads "Ended by you".
      setExitViewer(me.name);
      // Controls only an owner may use (start, rename, end, delete, resume) are not shown to other roles.
      document.documentElement.dataset.role = me.role;
      if (me.session !== undefined) {
        document.documentElement.dataset.shared = 'true';
        markShared();
      } else {
        this.profiles = await api.profiles();
        // Not a share link's tab (any more): a 401 now asks for the token.
        clearShared();
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        this.onUnauthorized();
        return;
      }
      this.sidebar.showError(`Could not load profiles: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.sidebar.setProfiles(this.profiles);
    window.addEventListener('hashchange', () => { this.openFromHash(); });
    this.installLifecycle();
    // A device with push on registers its subscription again: the server may have pruned or lost it.
    void this.notifier.start().then(() => this.push.renew()).catch((err: unknown) => { console.warn('duet: push', err); });
    this.feed.open();
    this.openFromHash();
  }

  /** Stops for good: the session's socket and the board's stream close, nothing reconnects. */
  close(): void {
    this.session?.dispose();
    this.session = null;
    this.feed.close();
  }

  /** The open replay (debugging and tests). */
  get replay(): ReplayView | null {
    return this.replayView;
  }

  /** The open session (debugging and tests). */
  get current(): SessionController | null {
    return this.session;
  }

  /**
   * Sessions this tab started, as the server answered: it sets their PTY size
   * from the start, and lays out their panes for their channel before the
   * board lists them (a terminal-only session's pane fit to the split's
   * height first, and resized the program twice).
   */
  private readonly created = new Map<string, SessionInfo>();

  private openFromHash(): void {
    // Whatever was chosen (a session, the board, a replay, Back): the drawer has done its job.
    this.menu.closeDrawer();
    this.route();
    // The open session's approvals no longer count as another's, and the last one's do.
    this.showWaiting();
  }

  /** Shows what the address names: a replay, the board, a session, or nothing. */
  private route(): void {
    // A menu left open belongs to what was shown before.
    this.exportMenu.close();
    this.replayView?.dispose();
    this.replayView = null;
    this.replaySlot.hidden = true;
    const replay = hashReplay();
    if (replay !== undefined) {
      this.openReplay(replay);
      return;
    }
    const id = hashSession();
    this.jumpTo = hashApproval();
    if (id !== undefined) this.cover(undefined);
    if (id !== undefined && id === this.session?.id) {
      this.jump();
      return;
    }
    this.session?.dispose();
    this.session = null;
    if (id === undefined) {
      this.showEmpty();
      return;
    }
    const s = new SessionController(id, {
      profileChannel: (profile) => this.profiles.find((p) => p.name === profile)?.channel,
      info: (sid) => this.sidebar.known.find((x) => x.id === sid) ?? this.created.get(sid),
      showTerminal: () => { this.showTerminal(); },
      // Out of the terminal: to the message box when it is on screen and usable, else to the top bar.
      leaveTerminal: () => { if (!this.session?.chat.focusComposer()) this.menu.button.focus(); },
      resume: (sid) => this.resumeSession(sid),
      connection: (sid, state) => { if (sid === this.session?.id) this.banner.show(state); },
      changed: (sid) => { this.sessionChanged(sid); },
      resumedBy: (sid) => latestResumption(sid, (x) => this.sidebar.known.find((k) => k.id === x) ?? this.created.get(x)),
    }, this.theme, this.created.has(id));
    this.session = s;
    this.chatSlot.append(s.chat.root);
    this.termSlot.append(s.terminal.root);
    this.sidebar.setCurrent(id);
    this.showTitle();
    this.sessionChanged(id);
    s.start();
    if (this.layout === 'terminal' || !s.hasChat) s.terminal.focus();
    else s.chat.focusComposer();
  }

  /** The replay of session `id` in place of the live view. */
  private openReplay(id: string): void {
    this.session?.dispose();
    this.session = null;
    this.cover(undefined);
    const r = new ReplayView(id, this.theme);
    this.replayView = r;
    this.replaySlot.replaceChildren(r.bar);
    this.replaySlot.hidden = false;
    this.banner.show(null);
    // Whatever the last live session was: a replay has both panes.
    this.workspace.dataset.chat = 'yes';
    this.layoutGroup.hidden = false;
    this.chatSlot.append(r.chat.root);
    this.termSlot.append(r.terminalRoot);
    this.sidebar.setCurrent(id);
    this.replayLink.hidden = true;
    this.exportMenu.update();
    const info = this.sidebar.known.find((x) => x.id === id);
    this.titleEl.textContent = `Replay · ${info ? `${sessionLabel(info)} · ` : ''}${id.slice(0, 8)}`;
    void r.load();
  }

  /** The open session's name in the top bar. */
  private showTitle(): void {
    const s = this.session;
    if (!s) return;
    const info = this.sidebar.known.find((x) => x.id === s.id);
    const id = s.id.slice(0, 8);
    this.exportMenu.update();
    this.replayLink.hidden = false;
    const replay = `#/session/${encodeURIComponent(s.id)}/replay`;
    const label = info ? sessionLabel(info) : undefined;
    const title = info && label !== undefined ? `${label === info.profile ? label : `${label} · ${info.profile}`} · ${id}${info.resumed_from !== undefined ? ` (resumed from ${info.resumed_from.slice(0, 8)})` : ''}` : id;
    // Shown again at each board tick (each second of output): touch the page only for a change.
    if (this.replayLink.getAttribute('href') !== replay) this.replayLink.href = replay;
    if (this.titleEl.textContent !== title) this.titleEl.textContent = title;
  }

  private showEmpty(): void {
    this.sidebar.setCurrent(undefined);
    this.layoutGroup.hidden = false;
    this.titleEl.textContent = hashBoard() ? 'Board' : '';
    this.exportMenu.update();
    this.replayLink.hidden = true;
    this.banner.show(null);
    if (hashBoard()) {
      this.cover('board');
      return;
    }
    const def = this.profiles.find((p) => p.default) ?? this.profiles[0];
    this.emptyState.replaceChildren(
      h('div', { class: 'empty-card' },
        h('h1', {}, 'No session open'),
        h('p', {}, 'Start an agent in a terminal on the server; follow it here as a terminal and as a chat.'),
        def && h('button', { type: 'button', class: 'btn btn-primary btn-large', onclick: () => { void this.startSession(def.name); } }, `Start ${def.name}`),
        this.sidebar.known.length > 0 && h('p', { class: 'muted' }, 'Or pick a running session from the list.'),
      ),
    );
    this.cover('empty');
  }

  /**
   * Shows `which` in place of a session, or neither. The workspace's grid
   * follows its data-cover: an attribute rather than a :has() on the
   * workspace, which made every row the terminal drew restyle the workspace
   * (Chromium re-checks :has() on each node inserted below).
   */
  private cover(which: 'empty' | 'board' | undefined): void {
    this.emptyState.hidden = which !== 'empty';
    this.boardView.show(which === 'board');
    if (which === undefined) delete this.workspace.dataset.cover;
    else this.workspace.dataset.cover = which;
  }

  private navigate(id: string | undefined): void {
    const hash = sessionHash(id);
    if (location.hash === hash || (hash === '' && location.hash === '')) {
      this.openFromHash();
      return;
    }
    if (hash === '') history.pushState(null, '', location.pathname + location.search);
    else location.hash = hash;
    this.openFromHash();
  }

  private async startSession(profile: string | undefined): Promise<void> {
    this.sidebar.showError(undefined);
    try {
      const size = this.newTerminalSize(profile);
      const s = await api.createSession({ ...(profile === undefined ? {} : { profile }), ...size });
      this.created.set(s.id, s);
      this.navigate(s.id);
    } catch (err) {
      this.sidebar.showError(`Could not start a session: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The terminal size a new session of `profile` will have in this window. */
  private newTerminalSize(profile: string | undefined): { cols?: number; rows?: number } {
    const p = this.profiles.find((x) => x.name === profile) ?? this.profiles.find((x) => x.default);
    const covers = [this.emptyState, this.boardView.root];
    return measureNewTerminal({ workspace: this.workspace, termSlot: this.termSlot, covers }, p?.channel.events ?? true, this.layout, this.theme) ?? {};
  }

  /**
   * Starts an ended session's conversation again and opens the new session.
   * A failure rejects: the button that asked shows it, next to itself.
   */
  private async resumeSession(id: string): Promise<void> {
    // At this window's size, as a new session: a session ended on a desktop
    // and resumed on a phone would otherwise start at the desktop's width.
    const old = this.sidebar.known.find((x) => x.id === id) ?? this.created.get(id);
    const s = await api.resume(id, old === undefined ? {} : this.newTerminalSize(old.profile));
    this.created.set(s.id, s);
    this.navigate(s.id);
  }

  /** The terminal, with the keyboard (e.g. to read a slash command's output). */
  private showTerminal(): void {
    if (this.layout === 'chat') this.setLayout('split');
    const s = this.session;
    if (!s) return;
    s.terminal.root.scrollIntoView({ block: 'nearest' });
    s.terminal.focus();
  }

  private async endSession(id: string): Promise<void> {
    try {
      await api.deleteSession(id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        this.sidebar.showError(`Could not end the session: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // The view stays: it says how the session ended, and offers Resume.
  }

  /** Deletes an ended session's transcript (DELETE ?purge=true): it leaves every list. */
  private async purgeSession(id: string): Promise<void> {
    try {
      await api.deleteSession(id, { purge: true });
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) {
        this.sidebar.showError(`Could not delete the transcript: ${err instanceof Error ? err.message : String(err)}`);
        return;
      }
    }
    if (this.session?.id === id) this.navigate(undefined);
  }

  /** Brings the approval named in the address into view, once it is drawn. */
  private jump(): void {
    if (this.jumpTo === undefined || !this.session) return;
    if (this.layout === 'terminal') this.setLayout('split');
    if (this.session.chat.jumpToApproval(this.jumpTo)) this.jumpTo = undefined;
  }

  /** A new board from the stream: the sidebar, the board view, the tab title, notifications. */
  private onBoard(board: Board): void {
    this.notifier.board(board);
    const sessions = board.sessions.map((e) => e.session);
    this.sidebar.setSessions(sessions);
    this.boardView.set(board);
    this.session?.infoChanged();
    this.showTitle();
    this.showWaiting();
  }

  /** Approvals waiting in the other sessions (the board's count): on the ☰ and in the tab's title. */
  private showWaiting(): void {
    const others = this.sidebar.known.reduce((n, s) => n + (s.id === this.session?.id ? 0 : s.pending_approvals), 0);
    this.menu.setWaiting(others);
    this.updateTitle(others);
  }

  private othersPending = 0;
  private updateTitle(othersPending: number): void {
    this.othersPending = othersPending;
    const mine = this.session ? Object.values(this.session.chatState.approvals).filter((a) => a.state === 'pending').length : 0;
    const n = othersPending + mine;
    document.title = n > 0 ? `(${n}) duet — approval needed` : 'duet';
  }

  private sessionChanged(id: string): void {
    const s = this.session;
    if (s?.id !== id) return;
    const mine = Object.values(s.chatState.approvals).filter((a) => a.state === 'pending').length;
    this.sidebar.setLivePending(id, mine);
    this.jump();
    this.updateTitle(this.othersPending);
    this.workspace.dataset.status = chatStatus(s.chatState);
    // A terminal-only program: just the terminal, and no layout to choose.
    this.workspace.dataset.chat = s.hasChat ? 'yes' : 'none';
    this.layoutGroup.hidden = !s.hasChat;
  }

  private setLayout(layout: Layout): void {
    this.layout = layout;
    this.workspace.dataset.layout = layout;
    this.layoutGroup.show(layout);
  }

  private setTheme(theme: ThemeName, remember: boolean): void {
    this.theme = theme;
    applyTheme(theme, remember);
    this.session?.terminal.setTheme(theme);
    this.replayView?.setTheme(theme);
    const next = theme === 'dark' ? 'light' : 'dark';
    this.themeButton.textContent = theme === 'dark' ? '☀' : '☾';
    this.themeButton.setAttribute('aria-label', `Switch to the ${next} theme`);
    this.themeButton.title = `Switch to the ${next} theme`;
  }

  /** Back/forward cache, visibility and network changes. */
  private installLifecycle(): void {
    // An open WebSocket keeps a page out of the bfcache, and a cached page's
    // socket is dead anyway: close on pagehide, reconnect (from the last seq)
    // on pageshow.
    window.addEventListener('pagehide', () => {
      this.session?.suspend();
      this.feed.close();
    });
    window.addEventListener('pageshow', (ev) => {
      if (ev.persisted) {
        this.session?.resume();
        this.feed.open();
      }
    });
    window.addEventListener('online', () => { this.session?.resume(); });
  }
}
