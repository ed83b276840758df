// The terminal pane: xterm.js attached to the session's PTY. Output is written
// with flow control (terminal/flow.ts); keystrokes go out as bytes; the size
// follows the pane (ResizeObserver → fit → `resize`, debounced) and follows
// the server when another client resized the PTY. WebGL renders on a hardware
// GPU (terminal/renderer.ts); if it fails or loses its context the DOM
// renderer takes over. A pane that follows another window's size shows the
// terminal whole (scaled down) or at full size (scrolled), as its user chose
// (remembered per browser); "Fit to my window" takes the size for everyone.
import { FitAddon } from '@xterm/addon-fit';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Terminal, type IDisposable } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { h, setHidden } from '../ui/dom';
import { terminalThemes, type ThemeName } from '../ui/theme';
import { BAR_KEYS, isLeaveKey, LEAVE_KEY, type BarKey } from './keys';
import { saveFollowView, savedFollowView, terminalLook, type FollowView } from './look';
import { FlowControl } from './flow';
import { copySelection, selectionToTextarea } from './copy';
import { chooseRenderer, loadWebglAddon } from './renderer';
import { applyScale, fitScale, innerBox } from './scale';

/** What the pane asks of its owner. */
export interface TerminalOwner {
  /** Bytes typed or pasted, for the PTY. */
  input(data: Uint8Array): void;
  /** The pane settled on a new size; tell the server. */
  resize(cols: number, rows: number): void;
  /** Flow control: `true` = send `pause`, `false` = send `resume`. */
  flow(pause: boolean): void;
  /** The user asked to leave the terminal (LEAVE_KEY): move the keyboard focus elsewhere. */
  leave(): void;
}

/** Ids of the hints that name LEAVE_KEY (one per pane). */
let hintCounter = 0;

export { BAR_KEYS, LEAVE_KEY, terminalLook, type BarKey, type FollowView };

/** What a test compares between two tabs: the visible cells, line by line. */
export interface ScreenDump {
  cols: number;
  rows: number;
  cursor: [number, number];
  alt: boolean;
  lines: { text: string; wrapped: boolean }[];
  driver: boolean;
  renderer: string;
}

/** The owner of a pane that only measures: it never types, resizes or pauses. */
const IGNORE: TerminalOwner = { input: () => undefined, resize: () => undefined, flow: () => undefined, leave: () => undefined };

/**
 * Output goes to xterm in pieces of at most this many bytes. xterm parses a
 * write whole and yields to the page between writes once 12 ms have passed;
 * the server sends up to 256 KiB a frame, which took 115 ms to parse in one
 * task during a flood (docs/benchmarks.md, "In the browser").
 */
const WRITE_PIECE = 32 << 10;

/** Resize messages wait this long for the pane to settle, in ms. */
const RESIZE_DEBOUNCE = 120;

const encoder = new TextEncoder();

/** The terminal pane. */
export class TerminalPane {
  /** The pane's root element. */
  readonly root: HTMLElement;
  private readonly host: HTMLElement;
  private readonly term: Terminal;
  private readonly fit = new FitAddon();
  private readonly flowControl: FlowControl;
  private readonly observer: ResizeObserver;
  private readonly disposables: IDisposable[] = [];
  private resizeTimer: ReturnType<typeof setTimeout> | undefined;
  private webgl: IDisposable | null = null;
  private disposed = false;
  /** The size the server last reported for the PTY. */
  private serverSize: { cols: number; rows: number } | null = null;
  /**
   * This pane sets the PTY size (it typed, resized its window or asked to fit
   * last). Otherwise it draws at the PTY's size, scrollable, and offers "Fit".
   */
  private driver = false;
  /** Between a `resync` and its snapshot: no fit may change the size. */
  private awaitingSnapshot = false;
  /** A fit fell between a `resync` and its snapshot: it runs after the snapshot. */
  private fitDeferred = false;
  /**
   * Sizes this pane asked for whose `resize` echo has not come back, oldest
   * first: an echo of one of them is this pane's own, not another client's
   * (two quick fits send two sizes; the first echo must not look foreign).
   */
  private sentSizes: string[] = [];
  private readonly fitButton: HTMLButtonElement;
  /** A follower's controls: the view (scale or scroll) and, for a role that may, Fit. */
  private readonly followBar: HTMLElement;
  private readonly viewGroup: HTMLElement;
  private readonly viewButtons = new Map<FollowView, HTMLButtonElement>();
  private followView: FollowView = savedFollowView();
  /** This connection may set the PTY size (its role drives); a viewer only follows. */
  private mayDrive = true;
  /** The window changed size since the last fit. */
  private windowResized = false;
  /** The window's size when last seen: a `resize` event that did not change it (page load) is no user action. */
  private windowSize = `${String(window.innerWidth)}x${String(window.innerHeight)}`;
  private readonly onWindowResize = (): void => {
    const size = `${String(window.innerWidth)}x${String(window.innerHeight)}`;
    // Only a person resizes a window: before any click or key on the page, a change is the
    // browser settling its viewport (seen at a first launch under load), which must not take the
    // terminal's size from everyone.
    if (size !== this.windowSize && (navigator.userActivation as UserActivation | undefined)?.hasBeenActive !== false) this.windowResized = true;
    this.windowSize = size;
    this.scheduleFit();
  };
  private readonly keyBar: HTMLElement;
  /** Over the terminal's bottom edge: notes (the owner's too, see `addNote`), the leave hint, a follower's controls. */
  private readonly overlay: HTMLElement;
  /** Read with the terminal's input (aria-describedby): how to leave it. */
  private readonly hint: HTMLElement;

  constructor(private readonly owner: TerminalOwner, theme: ThemeName) {
    this.host = h('div', { class: 'terminal-host' });
    // Said on the button itself, not only in a tooltip (a phone has none): the PTY has one size for all.
    this.fitButton = h('button', { type: 'button', class: 'btn term-fit', hidden: true, title: 'Another window sets the terminal size. This resizes the terminal to this window for everyone who follows it.', onclick: () => { this.takeSize(); this.focus(); } },
      h('span', { class: 'term-fit-label' }, 'Fit to my window'), h('span', { class: 'term-fit-note' }, ' · resizes it for everyone'));
    this.viewGroup = h('div', { class: 'segmented term-view', role: 'group', 'aria-label': 'The terminal is larger than this window: show it' });
    for (const [view, label] of [['scale', 'Scale to fit'], ['scroll', 'Scroll']] as const) {
      const b = h('button', { type: 'button', class: 'seg', 'data-view': view, 'aria-pressed': String(view === this.followView), onclick: () => { this.setFollowView(view); } }, label);
      this.viewButtons.set(view, b);
      this.viewGroup.append(b);
    }
    this.followBar = h('div', { class: 'term-follow', hidden: true }, this.viewGroup, this.fitButton);
    this.keyBar = h('div', { class: 'key-bar', role: 'toolbar', 'aria-label': 'Terminal keys' },
      ...BAR_KEYS.map((k) => h('button', {
        type: 'button',
        class: 'key',
        'aria-label': k.name,
        'data-key': k.name,
        // Keep the focus (and the on-screen keyboard) on the terminal.
        onpointerdown: (ev: Event) => { ev.preventDefault(); },
        onmousedown: (ev: Event) => { ev.preventDefault(); },
        onclick: () => { this.sendKey(k); },
      }, k.label)));
    hintCounter++;
    this.hint = h('p', { id: `terminal-hint-${String(hintCounter)}`, class: 'visually-hidden' }, `Tab and Escape go to the program. ${LEAVE_KEY} leaves the terminal for the message box, or for the top bar.`);
    // The same, on screen while the terminal has the keyboard (CSS shows it on the host's focus).
    const leaveHint = h('p', { class: 'term-leave-hint', 'aria-hidden': 'true' }, h('kbd', {}, LEAVE_KEY), ' leaves the terminal');
    // Notes and controls over the terminal's bottom edge flow side by side (and wrap) instead of covering each other.
    this.overlay = h('div', { class: 'term-overlay' }, leaveHint, this.followBar);
    this.root = h('section', { class: 'pane terminal-pane', 'aria-label': 'Terminal', 'data-view': this.followView }, h('div', { class: 'terminal-stage' }, this.host, this.overlay), this.keyBar, this.hint);
    this.term = new Terminal({
      allowProposedApi: true, // needed by the unicode11 addon
      // The cursor blinks with WebGL only (loadWebgl). The DOM renderer blinks
      // with a CSS animation that has Chromium restyle and paint a frame every
      // vsync while the terminal has the focus: ~40 ms of CPU a second in an
      // idle tab, and an echo's frame waits for the next vsync slot (see
      // docs/benchmarks.md, "In the browser").
      cursorBlink: false,
      ...terminalLook(theme),
      macOptionIsMeta: true,
      // No reflow on resize: the server's screen (vt100), whose snapshot a reload
      // or a second tab draws, cuts and pads lines instead of rewrapping them, and
      // grows rows at the bottom. xterm does the same when it believes the PTY is
      // winpty; any other reflow would make a reload differ from the live view.
      windowsPty: { backend: 'winpty', buildNumber: 1 },
    });
    this.flowControl = new FlowControl((pause) => { owner.flow(pause); });
    this.term.loadAddon(this.fit);
    this.term.loadAddon(new WebLinksAddon());
    this.term.loadAddon(new Unicode11Addon());
    this.term.unicode.activeVersion = '11';
    this.disposables.push(
      this.term.onData((s) => { owner.input(encoder.encode(s)); }),
      // onBinary carries raw bytes (e.g. some mouse reports) as a binary string.
      this.term.onBinary((s) => { owner.input(Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff)); }),
    );
    this.observer = new ResizeObserver(() => { this.scheduleFit(); });
    // The terminal's element takes its new size when xterm renders the resize: measure then.
    this.disposables.push(this.term.onResize(() => { requestAnimationFrame(() => { if (!this.disposed) this.updateFollowView(); }); }));
    // Ctrl+Shift+C copies the selection (Ctrl+C stays the terminal's interrupt);
    // LEAVE_KEY leads the keyboard out.
    this.term.attachCustomKeyEventHandler((ev) => {
      if (isLeaveKey(ev)) {
        ev.preventDefault();
        if (ev.type === 'keydown') owner.leave();
        return false;
      }
      if (ev.type === 'keydown' && ev.ctrlKey && ev.shiftKey && !ev.altKey && (ev.key === 'C' || ev.key === 'c')) {
        ev.preventDefault();
        void this.copySelection();
        return false;
      }
      return true;
    });
  }

  /**
   * The size a pane would fit to in `slot`, from a throwaway pane laid over
   * it unseen: what a new session's program should start at, before any pane
   * of it exists (the first `resize` comes only after it drew its banner).
   */
  static measureIn(slot: HTMLElement, theme: ThemeName): { cols: number; rows: number } | null {
    const probe = new TerminalPane(IGNORE, theme);
    probe.root.classList.add('terminal-probe');
    slot.append(probe.root);
    try {
      probe.term.open(probe.host);
      return probe.fitSize();
    } finally {
      probe.dispose();
      probe.root.remove();
    }
  }

  /** Puts a note (e.g. "read only") over the terminal's bottom edge, beside its controls rather than over them. */
  addNote(note: HTMLElement): void {
    this.overlay.prepend(note);
  }

  /** Copies the terminal's selection to the clipboard; false when nothing is selected. */
  async copySelection(): Promise<boolean> {
    return copySelection(this.term);
  }

  /** Sends a key-bar key as the terminal would. */
  sendKey(k: BarKey): void {
    this.claim();
    this.owner.input(encoder.encode(k.bytes(this.term.modes.applicationCursorKeysMode)));
  }

  /** Whether this pane sets the PTY size. */
  get drives(): boolean {
    return this.driver;
  }

  /** The live terminal (tests read its buffer). */
  get xterm(): Terminal {
    return this.term;
  }

  /** Opens the terminal once the pane is in the document. */
  mount(): void {
    this.term.open(this.host);
    this.term.textarea?.setAttribute('aria-describedby', this.hint.id);
    this.observer.observe(this.host);
    // The terminal's own box too: it takes its size once xterm has measured its font, which under
    // load came after the attach, and a follower's view (scale, the larger-terminal controls) was
    // then decided on a terminal of no size, and never again.
    if (this.term.element) this.observer.observe(this.term.element);
    window.addEventListener('resize', this.onWindowResize);
    // Typing here takes the PTY size back from another tab that resized it.
    this.disposables.push(this.term.onData(() => { this.claim(); }));
    // The context menu copies/pastes through xterm's textarea: put the selection there first.
    this.host.addEventListener('contextmenu', () => { selectionToTextarea(this.term); });
    const choice = chooseRenderer();
    this.root.dataset.renderer = 'dom';
    this.root.dataset.rendererReason = choice.reason;
    if (choice.renderer === 'webgl') {
      // A lost context fires `webglcontextlost` on the canvas (it does not
      // bubble: listen in the capture phase). The addon waits 3 s for a
      // restore before it gives up, with a blank terminal meanwhile: switch now.
      this.host.addEventListener('webglcontextlost', () => { if (this.webgl) this.dropWebgl('context-lost'); }, { capture: true });
      void this.loadWebgl();
    }
    this.fitNow(false);
  }

  /** This pane becomes the one that sets the PTY size (it typed). */
  private claim(): void {
    if (this.driver || !this.mayDrive) return;
    this.takeSize();
  }

  /**
   * Whether this connection may set the PTY size (its role drives). One that
   * may not (a viewer, an approver) only follows: no Fit, no key bar, and
   * neither its keys nor its window's size make it the driver.
   */
  setMayDrive(may: boolean): void {
    this.mayDrive = may;
    this.root.dataset.mayDrive = String(may);
    if (!may) this.driver = false;
    this.updateFitButton();
  }

  /** How this pane shows a larger terminal while it follows: scaled to fit or scrolled (remembered). */
  setFollowView(view: FollowView): void {
    this.followView = view;
    saveFollowView(view);
    this.root.dataset.view = view;
    for (const [v, b] of this.viewButtons) b.setAttribute('aria-pressed', String(v === view));
    this.updateFitButton();
  }

  /** "Fit to my window": this pane drives the PTY size from now on. */
  takeSize(): void {
    if (!this.mayDrive) return;
    this.driver = true;
    this.fitNow(true);
  }

  /** Live output (or the snapshot after a resync). */
  write(data: Uint8Array): void {
    const deferred = this.awaitingSnapshot && this.fitDeferred;
    this.awaitingSnapshot = false;
    if (deferred) {
      // The window changed while the snapshot was on its way: fit at once (a
      // timer in a background tab may wait a second, and a late fit would
      // take the size back from a window resized since).
      this.fitDeferred = false;
      this.fitAfterResize();
    }
    const n = data.byteLength;
    this.flowControl.written(n);
    // xterm's UTF-8 decoder carries a character split between pieces.
    let at = 0;
    for (; n - at > WRITE_PIECE; at += WRITE_PIECE) this.term.write(data.subarray(at, at + WRITE_PIECE));
    this.term.write(data.subarray(at), () => { this.flowControl.rendered(n); });
  }

  /** `resync`: the next frame is a full snapshot of a cols×rows screen. */
  resync(cols: number, rows: number): void {
    // The snapshot is cells of a cols×rows screen: resize first, and let no
    // fit change the size before it is written (a pending fit waits for it).
    this.awaitingSnapshot = true;
    this.serverSize = { cols, rows };
    this.term.reset();
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    this.updateFitButton();
  }

  /** Another client resized the PTY: draw at its size so the program's output lines up. */
  serverResized(cols: number, rows: number): void {
    const at = this.sentSizes.indexOf(`${String(cols)}x${String(rows)}`);
    const own = at >= 0 || (this.serverSize?.cols === cols && this.serverSize.rows === rows);
    // Echoes come in order: older sizes of ours will not come back any more.
    if (at >= 0) this.sentSizes = this.sentSizes.slice(at + 1);
    this.serverSize = { cols, rows };
    // Someone else set a size: they drive now.
    if (!own) this.driver = false;
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    this.updateFitButton();
  }

  /**
   * A (re)connection: restore flow state. The pane takes the PTY size only if
   * it drove before (or it is `first`, e.g. it just started the session);
   * a reload or a second tab draws at the PTY's size until the user types,
   * resizes this window or presses "Fit to my window".
   */
  connected(first = false): void {
    this.flowControl.reconnected();
    if (first) this.driver = true;
    if (this.driver) this.fitNow(true);
    this.updateFitButton();
  }

  /** Recolours the terminal. */
  setTheme(theme: ThemeName): void {
    this.term.options.theme = terminalThemes[theme];
  }

  /** Gives the terminal the keyboard. */
  focus(): void {
    this.term.focus();
  }

  /** The visible screen as text (a debugging aid, used by the browser tests). */
  text(): string {
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < buf.length; y++) lines.push(buf.getLine(y)?.translateToString(true) ?? '');
    return lines.join('\n');
  }

  /** The visible screen, cell-exact enough to compare two tabs (tests). */
  screen(): ScreenDump {
    const buf = this.term.buffer.active;
    const lines: { text: string; wrapped: boolean }[] = [];
    for (let y = 0; y < this.term.rows; y++) {
      const line = buf.getLine(buf.viewportY + y);
      lines.push({ text: line?.translateToString(true) ?? '', wrapped: line?.isWrapped ?? false });
    }
    return { cols: this.term.cols, rows: this.term.rows, cursor: [buf.cursorX, buf.cursorY], alt: buf.type === 'alternate', lines, driver: this.driver, renderer: this.root.dataset.renderer ?? '' };
  }

  /** Flow-control figures (a debugging aid). */
  get flow(): { backlog: number; peak: number; pauses: number } {
    return { backlog: this.flowControl.backlog, ...this.flowControl.stats };
  }

  /** Tears the terminal down. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.resizeTimer);
    this.observer.disconnect();
    window.removeEventListener('resize', this.onWindowResize);
    for (const d of this.disposables) d.dispose();
    this.webgl?.dispose();
    this.term.dispose();
  }

  private scheduleFit(): void {
    clearTimeout(this.resizeTimer);
    this.resizeTimer = setTimeout(() => { this.fitAfterResize(); }, RESIZE_DEBOUNCE);
  }

  private fitAfterResize(): void {
    if (this.awaitingSnapshot) {
      this.fitDeferred = true;
      return;
    }
    // The user resized this window: this client drives the PTY size now.
    // (A pane that only changed with the layout keeps following.)
    if (this.windowResized && this.mayDrive) this.driver = true;
    this.windowResized = false;
    this.fitNow(true);
  }

  /** The size that would fit the pane, or null when it has none (hidden). */
  private fitSize(): { cols: number; rows: number } | null {
    if (this.host.clientWidth === 0 || this.host.clientHeight === 0) return null;
    const dims = this.fit.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return null;
    return { cols: Math.max(2, Math.floor(dims.cols)), rows: Math.max(1, Math.floor(dims.rows)) };
  }

  private updateFitButton(): void {
    const f = this.fitSize();
    const off = f !== null && (f.cols !== this.term.cols || f.rows !== this.term.rows);
    setHidden(this.fitButton, this.driver || !off || !this.mayDrive);
    if (this.root.dataset.driver !== String(this.driver)) this.root.dataset.driver = String(this.driver);
    // A driver's pane does not scroll (it fits): undo any scrolling left from following.
    if (this.driver && (this.host.scrollTop !== 0 || this.host.scrollLeft !== 0)) this.host.scrollTo(0, 0);
    this.updateFollowView();
  }

  /** A follower's view of a terminal larger than its pane: scaled whole, or scrollable; and its controls. */
  private updateFollowView(): void {
    const el = this.term.element;
    const room = innerBox(this.host);
    // The terminal's own size (offset sizes ignore the transform).
    const size = el ? { width: el.offsetWidth, height: el.offsetHeight } : { width: 0, height: 0 };
    const larger = !this.driver && room.width > 0 && (size.width > room.width + 1 || size.height > room.height + 1);
    setHidden(this.viewGroup, !larger);
    setHidden(this.followBar, this.driver || (this.viewGroup.hidden && this.fitButton.hidden));
    if (el) applyScale(el, larger && this.followView === 'scale' ? fitScale(size, room) : 1);
  }

  /** Fits the terminal to the pane; with `announce`, tells the server when the PTY size differs. */
  private fitNow(announce: boolean): void {
    if (this.disposed) return;
    if (this.awaitingSnapshot) {
      this.fitDeferred = true;
      return;
    }
    // A hidden pane (terminal-less layout) has no size: keep the last one.
    const f = this.fitSize();
    if (!f) return;
    const { cols, rows } = f;
    // A pane that follows another client keeps the PTY's size (scrollable), only offering to fit.
    if (!this.driver && this.serverSize) {
      this.updateFitButton();
      return;
    }
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    this.updateFitButton();
    const s = this.serverSize;
    if (announce && (s?.cols !== cols || s.rows !== rows)) {
      this.serverSize = { cols, rows };
      this.sentSizes = [...this.sentSizes.slice(-7), `${String(cols)}x${String(rows)}`];
      this.owner.resize(cols, rows);
    }
  }

  private async loadWebgl(): Promise<void> {
    const addon = await loadWebglAddon(this.term, () => { this.dropWebgl('context-lost'); }, () => this.disposed);
    if (addon === 'failed') {
      this.dropWebgl('webgl-failed');
      return;
    }
    if (addon === null) return;
    this.webgl = addon;
    this.term.options.cursorBlink = true; // a timer, one frame per blink
    this.root.dataset.renderer = 'webgl';
  }

  private dropWebgl(reason: string): void {
    this.root.dataset.rendererReason = reason;
    try {
      this.webgl?.dispose();
    } catch {
      // Already half gone: nothing more to free.
    }
    this.webgl = null;
    this.root.dataset.renderer = 'dom';
    this.term.options.cursorBlink = false;
    if (!this.disposed) this.term.refresh(0, this.term.rows - 1);
  }
}
