// The terminal pane: xterm.js attached to the session's PTY. Output is written
// with flow control (terminal/flow.ts); keystrokes go out as bytes; the size
// follows the pane (ResizeObserver → fit → `resize`, debounced) and follows
// the server when another client resized the PTY. WebGL renders when it can;
// if it fails or loses its context we fall back to the DOM renderer.
import { FitAddon } from '@xterm/addon-fit';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { Terminal, type IDisposable } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { h } from '../ui/dom';
import { terminalThemes, type ThemeName } from '../ui/theme';
import { FlowControl } from './flow';

/** What the pane asks of its owner. */
export interface TerminalOwner {
  /** Bytes typed or pasted, for the PTY. */
  input(data: Uint8Array): void;
  /** The pane settled on a new size; tell the server. */
  resize(cols: number, rows: number): void;
  /** Flow control: `true` = send `pause`, `false` = send `resume`. */
  flow(pause: boolean): void;
}

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

  constructor(private readonly owner: TerminalOwner, theme: ThemeName) {
    this.host = h('div', { class: 'terminal-host' });
    this.root = h('section', { class: 'pane terminal-pane', 'aria-label': 'Terminal' }, this.host);
    this.term = new Terminal({
      allowProposedApi: true, // needed by the unicode11 addon
      cursorBlink: true,
      fontFamily: 'ui-monospace, "SFMono-Regular", "JetBrains Mono", Menlo, Consolas, "DejaVu Sans Mono", monospace',
      fontSize: 13,
      lineHeight: 1.15,
      scrollback: 5000,
      theme: terminalThemes[theme],
      macOptionIsMeta: true,
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
  }

  /** Opens the terminal once the pane is in the document. */
  mount(): void {
    this.term.open(this.host);
    this.observer.observe(this.host);
    // Typing here takes the PTY size back from another tab that resized it.
    this.term.textarea?.addEventListener('focus', () => { this.fitNow(true); });
    void this.loadWebgl();
    this.fitNow(false);
  }

  /** Live output (or the snapshot after a resync). */
  write(data: Uint8Array): void {
    const n = data.byteLength;
    this.flowControl.written(n);
    this.term.write(data, () => { this.flowControl.rendered(n); });
  }

  /** `resync`: the next frame is a full snapshot of a cols×rows screen. */
  resync(cols: number, rows: number): void {
    this.serverSize = { cols, rows };
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    this.term.reset();
  }

  /** Another client resized the PTY: draw at its size so the program's output lines up. */
  serverResized(cols: number, rows: number): void {
    this.serverSize = { cols, rows };
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
  }

  /** A (re)connection: claim the PTY size for this pane and restore flow state. */
  connected(): void {
    this.flowControl.reconnected();
    this.fitNow(true);
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

  /** Flow-control figures (a debugging aid). */
  get flow(): { backlog: number; peak: number; pauses: number } {
    return { backlog: this.flowControl.backlog, ...this.flowControl.stats };
  }

  /** Tears the terminal down. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.resizeTimer);
    this.observer.disconnect();
    for (const d of this.disposables) d.dispose();
    this.webgl?.dispose();
    this.term.dispose();
  }

  private scheduleFit(): void {
    clearTimeout(this.resizeTimer);
    this.resizeTimer = setTimeout(() => { this.fitNow(true); }, RESIZE_DEBOUNCE);
  }

  /** Fits the terminal to the pane; with `announce`, tells the server when the PTY size differs. */
  private fitNow(announce: boolean): void {
    if (this.disposed) return;
    // A hidden pane (terminal-less layout) has no size: keep the last one.
    if (this.host.clientWidth === 0 || this.host.clientHeight === 0) return;
    const dims = this.fit.proposeDimensions();
    if (!dims || !Number.isFinite(dims.cols) || !Number.isFinite(dims.rows)) return;
    const cols = Math.max(2, Math.floor(dims.cols));
    const rows = Math.max(1, Math.floor(dims.rows));
    if (this.term.cols !== cols || this.term.rows !== rows) this.term.resize(cols, rows);
    const s = this.serverSize;
    if (announce && (s?.cols !== cols || s.rows !== rows)) {
      this.serverSize = { cols, rows };
      this.owner.resize(cols, rows);
    }
  }

  private async loadWebgl(): Promise<void> {
    try {
      // Loaded on demand: the DOM renderer works without it, and it is the largest addon.
      const { WebglAddon } = await import('@xterm/addon-webgl');
      if (this.disposed) return;
      const addon = new WebglAddon();
      addon.onContextLoss(() => {
        // The GPU went away (driver reset, too many contexts): the DOM renderer takes over.
        addon.dispose();
        this.webgl = null;
      });
      this.term.loadAddon(addon);
      this.webgl = addon;
      this.root.dataset.renderer = 'webgl';
    } catch {
      this.root.dataset.renderer = 'dom';
    }
  }
}
