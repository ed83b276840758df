// The chat log as a windowed list: only the entries near the view (a margin
// above and below it) and the pinned ones (a pending approval, the entry with
// the keyboard) have elements; the rest are data, stood for by spacers as
// tall as they are (measured when they were last drawn, else estimated: see
// chat/geometry.ts). A long session's log costs the DOM of a few screens, and
// opening it draws the newest screenful, not all of it.
//
// Scrolling draws the entries coming into the margin; whenever heights
// change (an entry drawn for the first time, a reply that grew, a result
// opened) the entry at the top of the view keeps its place on screen, or the
// end of the log stays in view while the reader follows it. The list owns
// the log's scrolling: following, the reader's own scrolls, the log resized.
import { drawnIndices, Geometry, type Anchor } from './geometry';

/** One entry of the log: what to draw, and when its element must be drawn again. */
export interface Entry {
  readonly key: string;
  /** What kind of entry it is (its height is estimated from the drawn ones of the same kind). */
  readonly kind: string;
  /** Its element is drawn again when one of these changed (by identity). */
  readonly item: unknown;
  readonly approval: unknown;
  readonly ctxKey: string;
  /** Drawn wherever the view is (a pending approval: its card must be there to answer and jump to). */
  readonly pinned: boolean;
  /** Its element (`old`: the one it had, to keep what the reader opened). */
  build(old: HTMLElement | undefined): HTMLElement;
}

interface Drawn {
  entry: Entry;
  readonly el: HTMLElement;
  pos: number;
  size: number;
}

/** Drawn beyond each edge of the view: at least this much, and at least the view's height (px). */
const MIN_MARGIN = 600;
/** Drawn while the log has no layout (its pane hidden): the newest ones. */
const UNLAID_COUNT = 40;
/** At most this many rounds of draw → measure → re-window per change. */
const MAX_PASSES = 4;
/** The reader is following when the end of the log is this close (px). */
const BOTTOM_SLACK = 48;

/** The windowed log inside `log` (its only children are entries and spacers). */
export class EntryList {
  private entries: readonly Entry[] = [];
  private readonly geom = new Geometry();
  private readonly drawn = new Map<string, Drawn>();
  private readonly keyOf = new WeakMap<Element, string>();
  /** Indices drawn now (sorted). */
  private drawnIdx: number[] = [];
  /** Entries that changed since the last draw: drawn ones must be compared again. */
  private stale = true;
  private readonly pinnedIdx: number[] = [];
  /** Drawn and not measured yet. */
  private readonly unmeasured = new Set<string>();
  /** Spacers by position ("top" stays first, so scrolling never moves a drawn entry), with what they stand for. */
  private readonly spacers = new Map<string, { el: HTMLElement; from: number; to: number }>();
  private follow = true;
  /** The scrollTop the list set itself (its scroll event is not the reader's). */
  private autoScrollTop = -1;
  private readonly entryObserver: ResizeObserver | undefined;
  private readonly viewObserver: ResizeObserver | undefined;
  private rewindow = 0;
  /** The log's padding and gap were read since it last changed size. */
  private boxRead = false;

  /** `changed` runs after the drawn entries or the scroll position changed. */
  constructor(private readonly log: HTMLElement, private readonly changed: () => void) {
    log.addEventListener('scroll', () => { this.onScroll(); });
    if (typeof ResizeObserver !== 'undefined') {
      this.entryObserver = new ResizeObserver((records) => { this.onEntriesResized(records); });
      // The log changes size (layout switch, window or keyboard): more or fewer entries, keep following.
      this.viewObserver = new ResizeObserver(() => {
        this.boxRead = false;
        this.apply(this.readerAnchor(), true);
      });
      this.viewObserver.observe(log);
    }
  }

  /** The reader is following the end of the log (not scrolled up). */
  get following(): boolean {
    return this.follow;
  }

  /** How many entries the log holds (drawn or not). */
  get count(): number {
    return this.entries.length;
  }

  /** The element of entry `key`, when it is drawn. */
  element(key: string): HTMLElement | undefined {
    return this.drawn.get(key)?.el;
  }

  /** Replaces the entries; elements whose entry did not change are kept. */
  set(entries: readonly Entry[]): void {
    // Where the reader is, before any height or position changes.
    const anchor = this.readerAnchor();
    this.entries = entries;
    this.geom.setEntries(entries);
    this.pinnedIdx.length = 0;
    entries.forEach((e, i) => { if (e.pinned) this.pinnedIdx.push(i); });
    this.stale = true;
    this.apply(anchor, true);
  }

  /** Draws again for the current scroll position and size. */
  update(): void {
    this.apply(this.readerAnchor());
  }

  /**
   * Scrolls `el` (in a drawn entry) into view and keeps it there while the
   * entries around it are drawn and measured.
   */
  reveal(el: HTMLElement, block: ScrollLogicalPosition = 'center'): void {
    el.scrollIntoView({ block });
    const key = this.entryKey(el);
    const i = key === undefined ? undefined : this.geom.indexOf(key);
    if (key !== undefined && i !== undefined) {
      this.follow = false;
      this.apply({ key, offset: this.log.scrollTop - this.geom.top(i) });
      el.scrollIntoView({ block });
    }
    this.follow = this.atBottom();
  }

  /** Keeps the end in view while following (after text was added to a drawn entry). */
  keepBottom(): void {
    if (this.follow) this.scrollTo(this.log.scrollHeight - this.log.clientHeight);
  }

  private atBottom(): boolean {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < BOTTOM_SLACK;
  }

  private laidOut(): boolean {
    return this.log.clientHeight > 0;
  }

  /** The entry at the top of the view, unless the reader follows the end (or nothing is laid out). */
  private readerAnchor(): Anchor | undefined {
    return this.follow || !this.laidOut() ? undefined : this.geom.anchorAt(this.log.scrollTop);
  }

  private onScroll(): void {
    // Our own scroll keeps following; the reader's decides by where it ends.
    if (this.autoScrollTop >= 0 && Math.abs(this.log.scrollTop - this.autoScrollTop) < 1) {
      this.autoScrollTop = -1;
    } else {
      this.autoScrollTop = -1;
      this.follow = this.atBottom();
    }
    this.update();
  }

  /** Drawn entries changed height: record it, keep the reader's place, draw what the new positions need next frame. */
  private onEntriesResized(records: readonly ResizeObserverEntry[]): void {
    if (!this.laidOut()) return;
    const anchor = this.readerAnchor();
    let changed = false;
    for (const r of records) {
      const key = this.keyOf.get(r.target);
      if (key === undefined || this.drawn.get(key)?.el !== r.target) continue;
      const height = r.borderBoxSize[0]?.blockSize ?? r.target.getBoundingClientRect().height;
      if (height > 0 && this.geom.measure(key, height)) changed = true;
      this.unmeasured.delete(key);
    }
    if (!changed) return;
    this.sizeSpacers();
    this.restore(anchor);
    // Drawing here would add observed elements this frame's observer round cannot
    // deliver: the window follows on the next frame.
    if (this.rewindow === 0) {
      this.rewindow = requestAnimationFrame(() => {
        this.rewindow = 0;
        this.update();
      });
    }
    this.changed();
  }

  /**
   * Draws the entries the view needs, measures the new ones, sizes the
   * spacers from the geometry and puts `anchor` back where it was (or the
   * end in view while following); again while measuring changed what the
   * view needs.
   */
  private apply(anchor: Anchor | undefined, force = false): void {
    const laidOut = this.laidOut();
    if (laidOut && !this.boxRead) this.readBox();
    let moved = force;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const want = this.wanted(laidOut);
      if (!this.stale && sameIndices(want, this.drawnIdx)) break;
      this.draw(want);
      moved = true;
      if (!laidOut) break;
      this.measureNew();
      this.sizeSpacers();
      this.restore(anchor);
    }
    // A scroll that drew nothing new leaves the reader where they scrolled to.
    if (laidOut && moved) this.restore(anchor);
    this.changed();
  }

  private wanted(laidOut: boolean): number[] {
    const n = this.entries.length;
    const pinned = [...this.pinnedIdx];
    const focused = this.focusedIndex();
    if (focused !== undefined) pinned.push(focused);
    if (!laidOut) return drawnIndices({ first: Math.max(0, n - UNLAID_COUNT), end: n }, pinned);
    const height = this.log.clientHeight;
    const scrollTop = this.follow ? this.geom.bottomScroll(height) : this.log.scrollTop;
    return drawnIndices(this.geom.range({ scrollTop, height, margin: Math.max(MIN_MARGIN, height) }), pinned);
  }

  /** The entry holding the keyboard: it stays drawn (removing it would drop the focus). */
  private focusedIndex(): number | undefined {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !this.log.contains(active)) return undefined;
    const key = this.entryKey(active);
    return key === undefined ? undefined : this.geom.indexOf(key);
  }

  /** The key of the drawn entry holding `el`. */
  private entryKey(el: Element): string | undefined {
    let n: Element | null = el;
    while (n && n.parentElement !== this.log) n = n.parentElement;
    return n ? this.keyOf.get(n) : undefined;
  }

  private draw(want: readonly number[]): void {
    const active = document.activeElement;
    const n = this.entries.length;
    const seq: HTMLElement[] = [];
    const keep = new Set<string>();
    const stale: HTMLElement[] = [];
    const usedSpacers = new Set<string>();
    let refocus: { el: HTMLElement; key: string | undefined } | undefined;
    const gap = (from: number, to: number): void => {
      const id = from === 0 ? 'top' : `gap${String(usedSpacers.size)}`;
      usedSpacers.add(id);
      let s = this.spacers.get(id);
      if (!s) {
        const el = document.createElement('div');
        el.className = 'chat-spacer';
        el.setAttribute('aria-hidden', 'true');
        s = { el, from, to };
        this.spacers.set(id, s);
      }
      s.from = from;
      s.to = to;
      seq.push(s.el);
    };
    let next = 0;
    for (const i of want) {
      const e = this.entries[i];
      if (!e) continue;
      if (i > next) gap(next, i);
      next = i + 1;
      keep.add(e.key);
      let d = this.drawn.get(e.key);
      if (!d || this.stale && (d.entry.item !== e.item || d.entry.approval !== e.approval || d.entry.ctxKey !== e.ctxKey)) {
        const el = e.build(d?.el);
        if (d && d.el !== el) {
          stale.push(d.el);
          // Keep the keyboard where it was: on the same control, or on the card.
          if (active instanceof HTMLElement && d.el.contains(active)) refocus = { el, key: active.closest<HTMLElement>('[data-focus-key]')?.dataset.focusKey };
        }
        d = { entry: e, el, pos: -1, size: -1 };
        this.drawn.set(e.key, d);
        this.keyOf.set(el, e.key);
        this.unmeasured.add(e.key);
        this.entryObserver?.observe(el);
      } else {
        d.entry = e;
      }
      // Assistive technology hears where the entry is in the whole log, drawn or not.
      if (d.pos !== i + 1) {
        d.el.setAttribute('aria-posinset', String(i + 1));
        d.pos = i + 1;
      }
      if (d.size !== n) {
        d.el.setAttribute('aria-setsize', String(n));
        d.size = n;
      }
      seq.push(d.el);
    }
    if (n > next) gap(next, n);
    // Out with what is no longer drawn, so the pass below only inserts.
    for (const [key, d] of this.drawn) {
      if (keep.has(key)) continue;
      stale.push(d.el);
      this.drawn.delete(key);
      this.unmeasured.delete(key);
    }
    for (const el of stale) {
      this.entryObserver?.unobserve(el);
      el.remove();
    }
    for (const [id, s] of this.spacers) if (!usedSpacers.has(id)) s.el.remove();
    let cursor = this.log.firstElementChild;
    for (const el of seq) {
      if (el === cursor) cursor = cursor.nextElementSibling;
      else this.log.insertBefore(el, cursor);
    }
    while (cursor) {
      const after: Element | null = cursor.nextElementSibling;
      cursor.remove();
      cursor = after;
    }
    if (refocus) {
      const { el, key } = refocus;
      const same = [...el.querySelectorAll<HTMLElement>('[data-focus-key]')].find((x) => x.dataset.focusKey === key && !(x instanceof HTMLButtonElement && x.disabled));
      const target = same ?? el.querySelector<HTMLElement>('.approval[tabindex], .approval-done[tabindex]') ?? el;
      target.focus({ preventScroll: true });
    }
    this.drawnIdx = [...want];
    this.stale = false;
  }

  /** Measures the entries drawn since the last measure (one layout for them all). */
  private measureNew(): void {
    for (const key of this.unmeasured) {
      const el = this.drawn.get(key)?.el;
      if (!el) continue;
      const height = el.getBoundingClientRect().height;
      if (height > 0) this.geom.measure(key, height);
    }
    this.unmeasured.clear();
  }

  private sizeSpacers(): void {
    for (const s of this.spacers.values()) {
      if (!s.el.isConnected) continue;
      const px = `${String(this.geom.span(s.from, s.to))}px`;
      if (s.el.style.height !== px) s.el.style.height = px;
    }
  }

  /** Puts the reader back: the end in view while following, else `anchor` where it was. */
  private restore(anchor: Anchor | undefined): void {
    if (this.follow) {
      this.scrollTo(this.log.scrollHeight - this.log.clientHeight);
      return;
    }
    const y = anchor === undefined ? undefined : this.geom.scrollFor(anchor);
    if (y !== undefined) this.scrollTo(y);
  }

  private scrollTo(y: number): void {
    const top = Math.max(0, y);
    if (Math.abs(this.log.scrollTop - top) < 0.5) return;
    this.log.scrollTop = top;
    this.autoScrollTop = this.log.scrollTop;
  }

  /** The log's padding and gap, which the geometry's positions include. */
  private readBox(): void {
    const cs = getComputedStyle(this.log);
    const px = (v: string): number => Number.parseFloat(v) || 0;
    this.geom.setBox({ padTop: px(cs.paddingTop), padBottom: px(cs.paddingBottom), gap: px(cs.rowGap) });
    this.boxRead = true;
  }
}

function sameIndices(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
