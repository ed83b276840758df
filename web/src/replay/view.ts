// The replay of one session (`#/session/<id>/replay`): the terminal and the
// chat as they were at any instant of its recording. The terminal is its own
// read-only xterm fed from the asciicast (forward: only the new frames; back:
// a reset in the stream, then the frames again); the chat is the ordinary
// reducer fed the events duet had received by then (their `at`), drawn by the
// ordinary chat view as a viewer, so approvals are pending until the moment
// the agent reported the decision. A live session replays what was recorded
// when the view opened; "Reload" takes in what came since. The recording
// keeps its own size, shrunk to show whole in the pane (terminal/scale.ts):
// its last rows were cut. The chat speaks as a replay's (no prompt box, no
// "type a prompt below").
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import type { ServerMessage, SessionInfo } from '../generated/protocol';
import { ChatView } from '../chat/view';
import type { ChatState } from '../chat/state';
import { api, apiUrl } from '../net/api';
import { h, svgIcon } from '../ui/dom';
import { terminalLook } from '../terminal/terminal';
import { applyScale, fitScale, innerBox } from '../terminal/scale';
import { terminalThemes, type ThemeName } from '../ui/theme';
import { CastError, parseCast, resizeOf, type Cast } from './cast';
import { advance, ChatTimeline, eventsUpTo, formatTime, framesUpTo, planFeed, replayEnd, sortEvents, SPEEDS, type TimedEvent } from './timeline';

/** Arrow keys move this many seconds (Shift: ten times as far). */
const STEP = 1;

async function fetchText(path: string): Promise<{ ok: boolean; status: number; text: string }> {
  const res = await fetch(apiUrl(path), { credentials: 'same-origin' });
  return { ok: res.ok, status: res.status, text: res.ok ? await res.text() : '' };
}

/** The `event` lines of `GET .../events?times=true`; lines that are not one are skipped. */
export function parseTimedEvents(ndjson: string): TimedEvent[] {
  const out: TimedEvent[] = [];
  for (const line of ndjson.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const m = JSON.parse(line) as ServerMessage;
      if (m.type === 'event' && typeof m.seq === 'number') out.push(m);
    } catch {
      // One bad line costs that line only.
    }
  }
  return sortEvents(out);
}

/** See the module header. */
export class ReplayView {
  /** The player's controls, across the top of the workspace. */
  readonly bar: HTMLElement;
  readonly chat: ChatView;
  /** The recorded terminal's pane. */
  readonly terminalRoot: HTMLElement;
  private readonly term: Terminal;
  private readonly scrubber: HTMLInputElement;
  private readonly playButton: HTMLButtonElement;
  private readonly speedSelect: HTMLSelectElement;
  private readonly timeEl: HTMLElement;
  private readonly note: HTMLElement;
  private cast: Cast | null = null;
  private events: TimedEvent[] = [];
  private timeline = new ChatTimeline([]);
  private info: SessionInfo | undefined;
  private end = 0;
  private pos = 0;
  /** Frames written to the terminal so far. */
  private fed = 0;
  private playing = false;
  private speed: number = SPEEDS[0];
  private raf = 0;
  private lastTick = 0;
  private state: ChatState | undefined;
  private disposed = false;
  private readonly host: HTMLElement;
  private readonly observer: ResizeObserver;

  constructor(readonly id: string, theme: ThemeName) {
    const noop = (): void => undefined;
    this.chat = new ChatView({
      onSubmit: () => false,
      onApprove: noop,
      onCancel: noop,
      onShowTerminal: noop,
      onResume: () => Promise.resolve(),
      onDiscard: noop,
      onSetMode: () => Promise.resolve(),
      onSetModel: () => Promise.resolve(),
    });
    this.chat.root.classList.add('replay-chat');
    this.scrubber = h('input', {
      type: 'range', class: 'replay-scrubber', min: '0', max: '0', step: '0.01', value: '0', 'aria-label': 'Replay position',
      oninput: () => { this.seek(Number(this.scrubber.value)); },
    });
    this.playButton = h('button', { type: 'button', class: 'btn replay-play', 'aria-label': 'Play', onclick: () => { this.toggle(); } }, playIcon(false));
    this.speedSelect = h('select', { class: 'replay-speed', 'aria-label': 'Speed', onchange: () => { this.speed = Number(this.speedSelect.value); } },
      ...SPEEDS.map((s) => h('option', { value: String(s) }, `${String(s)}×`)));
    this.timeEl = h('span', { class: 'replay-time', 'aria-live': 'off' }, '0:00.0');
    this.note = h('span', { class: 'replay-note', role: 'status' }, 'Loading the recording…');
    const reload = h('button', { type: 'button', class: 'btn btn-quiet replay-reload', title: 'Take in what was recorded since this replay opened', onclick: () => { void this.load(); } }, 'Reload');
    const live = h('a', { class: 'btn btn-quiet replay-live', href: `#/session/${encodeURIComponent(id)}` }, 'Live');
    this.bar = h('div', { class: 'replay-bar', role: 'toolbar', 'aria-label': 'Replay', onkeydown: (ev: Event) => { this.onKey(ev as KeyboardEvent); } },
      this.playButton, this.scrubber, this.timeEl, this.speedSelect, reload, live, this.note);
    const host = h('div', { class: 'replay-term-host' });
    this.host = host;
    this.terminalRoot = h('section', { class: 'pane terminal-pane replay-terminal', 'aria-label': 'Recorded terminal', tabindex: 0, onkeydown: (ev: Event) => { this.onKey(ev as KeyboardEvent); } }, host);
    this.term = new Terminal({ ...terminalLook(theme), disableStdin: true, cursorBlink: false });
    this.term.open(host);
    // The pane or the recording's size changed: fit again (once xterm has drawn the new size).
    this.observer = new ResizeObserver(() => { this.fit(); });
    this.observer.observe(host);
    this.term.onResize(() => { requestAnimationFrame(() => { this.fit(); }); });
    this.chat.root.addEventListener('keydown', (ev) => { this.onKey(ev); });
  }

  /** Fetches the recording, the timed events and the session, then shows the start (or keeps the position on a reload). */
  async load(): Promise<void> {
    this.note.textContent = 'Loading the recording…';
    const sid = encodeURIComponent(this.id);
    try {
      const [rec, evs, info] = await Promise.all([
        fetchText(`api/sessions/${sid}/recording`),
        fetchText(`api/sessions/${sid}/events?times=true`),
        api.session(this.id).catch(() => undefined),
      ]);
      if (this.disposed) return;
      this.info = info;
      const notes: string[] = [];
      this.cast = null;
      if (rec.ok) {
        try {
          this.cast = parseCast(rec.text);
        } catch (err) {
          notes.push(err instanceof CastError ? `Terminal: ${err.message}.` : 'Terminal: unreadable recording.');
        }
      } else notes.push(rec.status === 404 ? 'This session has no terminal recording.' : `Terminal: HTTP ${String(rec.status)}.`);
      if (!evs.ok) notes.push(`Chat: HTTP ${String(evs.status)}.`);
      this.events = parseTimedEvents(evs.text);
      if (this.events.some((e) => e.at === undefined)) notes.push('Some events have no receive time (recorded before duet kept them); they show from the start.');
      this.timeline = new ChatTimeline(this.events);
      this.end = replayEnd(this.cast?.frames ?? [], this.events);
      this.scrubber.max = String(this.end);
      if (info?.status === 'running') notes.push('Live session: this is what was recorded until now.');
      else if (info?.status === 'exited') notes.push('Ended session.');
      this.note.textContent = notes.join(' ');
      this.resetTerminal();
      this.fed = 0;
      this.state = undefined;
      this.seek(Math.min(this.pos, this.end));
    } catch (err) {
      this.note.textContent = `Could not load the replay: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /** Shows the instant `t` seconds into the recording. */
  seek(t: number): void {
    this.pos = Math.max(0, Math.min(t, this.end));
    if (Number(this.scrubber.value) !== this.pos) this.scrubber.value = String(this.pos);
    this.timeEl.textContent = `${formatTime(this.pos)} / ${formatTime(this.end)}`;
    this.scrubber.setAttribute('aria-valuetext', formatTime(this.pos));
    this.drawTerminal();
    this.drawChat();
  }

  /** Shows the whole recorded screen in the pane: shrunk when it is larger, never enlarged. */
  private fit(): void {
    const el = this.term.element;
    if (this.disposed || !el) return;
    applyScale(el, fitScale({ width: el.offsetWidth, height: el.offsetHeight }, innerBox(this.host)));
  }

  /** Follows the app's theme. */
  setTheme(theme: ThemeName): void {
    this.term.options.theme = terminalThemes[theme];
  }

  /** The position in seconds. */
  get position(): number {
    return this.pos;
  }

  /** The recorded terminal's buffer as text (tests). */
  terminalText(): string {
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < buf.length; y++) lines.push(buf.getLine(y)?.translateToString(true) ?? '');
    return lines.join('\n');
  }

  /** Every write so far has been parsed (tests read the buffer after it). */
  settled(): Promise<void> {
    return new Promise((ok) => { this.term.write('', ok); });
  }

  play(): void {
    if (this.playing) return;
    if (this.pos >= this.end) this.seek(0);
    this.playing = true;
    this.playButton.replaceChildren(playIcon(true));
    this.playButton.setAttribute('aria-label', 'Pause');
    this.lastTick = performance.now();
    const tick = (now: number): void => {
      if (!this.playing) return;
      this.seek(advance(this.pos, this.speed, now - this.lastTick, this.end));
      this.lastTick = now;
      if (this.pos >= this.end) this.pause();
      else this.raf = requestAnimationFrame(tick);
    };
    this.raf = requestAnimationFrame(tick);
  }

  pause(): void {
    this.playing = false;
    cancelAnimationFrame(this.raf);
    this.playButton.replaceChildren(playIcon(false));
    this.playButton.setAttribute('aria-label', 'Play');
  }

  private toggle(): void {
    if (this.playing) this.pause();
    else this.play();
  }

  /** Space plays or pauses, arrows seek (Shift: ten times as far), Home and End jump. */
  private onKey(ev: KeyboardEvent): void {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    const t = ev.target;
    // Keys in a text field or on a button of the page are theirs.
    if (t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement || (t instanceof HTMLInputElement && t !== this.scrubber)) return;
    const step = ev.shiftKey ? STEP * 10 : STEP;
    let handled = true;
    if (ev.key === ' ' && !(t instanceof HTMLButtonElement)) this.toggle();
    else if (ev.key === 'ArrowLeft') this.seek(this.pos - step);
    else if (ev.key === 'ArrowRight') this.seek(this.pos + step);
    else if (ev.key === 'Home') this.seek(0);
    else if (ev.key === 'End') this.seek(this.end);
    else handled = false;
    if (handled) ev.preventDefault();
  }

  private resetTerminal(): void {
    const size = this.cast?.header ?? { width: 80, height: 24 };
    // In the stream, so writes still queued never land after it: a full
    // reset (RIS), then the recording's starting size.
    this.term.write('\x1bc', () => { this.term.resize(size.width, size.height); });
  }

  private drawTerminal(): void {
    const frames = this.cast?.frames ?? [];
    const plan = planFeed(this.fed, framesUpTo(frames, this.pos));
    if (plan.reset) this.resetTerminal();
    let text = '';
    const flush = (): void => {
      if (text !== '') this.term.write(text);
      text = '';
    };
    for (let i = plan.from; i < plan.to; i++) {
      const f = frames[i];
      if (!f) continue;
      if (f.kind === 'o') {
        text += f.data;
        continue;
      }
      const size = resizeOf(f);
      flush();
      if (size) this.term.write('', () => { this.term.resize(size.cols, size.rows); });
    }
    flush();
    this.fed = plan.to;
  }

  private drawChat(): void {
    let state = this.timeline.at(eventsUpTo(this.events, this.pos));
    const exit = this.info?.exit;
    // An ended session's last moment shows how it ended.
    if (exit && this.pos >= this.end && this.info?.status === 'exited') state = { ...state, exit, awaitingReply: false };
    if (state === this.state) return;
    this.state = state;
    this.chat.render(state, { channel: this.info?.channel, connected: false, resumable: false, role: 'viewer', replay: true });
  }

  dispose(): void {
    this.disposed = true;
    this.pause();
    this.observer.disconnect();
    this.term.dispose();
    this.bar.remove();
    this.chat.root.remove();
    this.terminalRoot.remove();
  }
}

/** Play (a triangle) or pause (two bars), drawn inline: U+23F8 is a box where no emoji font is installed. */
function playIcon(playing: boolean): SVGSVGElement {
  return svgIcon([playing ? 'M2 1h3v10H2zM7 1h3v10H7z' : 'M2 1l9 5-9 5z'], { viewBox: '0 0 12 12', width: '12', height: '12', fill: 'currentColor' });
}
