// The chat log's geometry as data, for drawing only the entries near the
// view: each entry's height (measured once it was drawn, else estimated from
// the measured entries of its kind), the tops that follow from them, which
// entries a view needs, and where a scroll position stands relative to an
// entry (the anchor kept when heights change, so nothing on screen jumps).
// No DOM: chat/entry-list.ts measures, draws and scrolls.

/** The log's box: its padding and the gap between entries (CSS px). */
export interface Box {
  readonly padTop: number;
  readonly padBottom: number;
  readonly gap: number;
}

/** A scroll position as "this far below the top of entry `key`". */
export interface Anchor {
  readonly key: string;
  readonly offset: number;
}

/** Where the reader is: the log's scroll position and height, and the margin drawn beyond it. */
export interface Viewport {
  readonly scrollTop: number;
  readonly height: number;
  readonly margin: number;
}

/** An estimate for a kind nothing of which was measured yet (px). */
const DEFAULT_HEIGHT = 72;

/** What the geometry knows of an entry. */
export interface Placed {
  readonly key: string;
  /** Its height is estimated from the measured entries of the same kind. */
  readonly kind: string;
}

/** Heights and positions of the log's entries, in the log's scroll coordinates. */
export class Geometry {
  private entries: readonly Placed[] = [];
  private readonly index = new Map<string, number>();
  private readonly measured = new Map<string, number>();
  /** Measured heights by kind (sum, count): the estimate for that kind's unmeasured entries. */
  private readonly perKind = new Map<string, { sum: number; n: number }>();
  private measuredSum = 0;
  /** `tops[i]`: entry i's top; `tops[n]`: one gap below the last entry's bottom. Rebuilt when `dirty`. */
  private tops = new Float64Array(1);
  private dirty = true;
  private box: Box = { padTop: 0, padBottom: 0, gap: 0 };

  /**
   * The entries, in order. Heights measured before are kept by key. Only
   * what changed is indexed again: a log that grew at its end costs its new
   * entries, not a new index of all of them.
   */
  setEntries(entries: readonly Placed[]): void {
    const old = this.entries;
    let same = 0;
    while (same < old.length && same < entries.length && (old[same] === entries[same] || old[same]?.key === entries[same]?.key)) same++;
    for (let i = same; i < old.length; i++) {
      const key = old[i]?.key;
      if (key !== undefined && this.index.get(key) === i) this.index.delete(key);
    }
    for (let i = same; i < entries.length; i++) {
      const key = entries[i]?.key;
      if (key !== undefined) this.index.set(key, i);
    }
    this.entries = entries;
    // Entries go (a pending prompt becomes the transcript's): forget theirs once they pile up.
    if (this.measured.size > entries.length + 256) this.prune();
    this.dirty = true;
  }

  /** The log's padding and gap (read from its style once it is laid out). */
  setBox(box: Box): void {
    if (box.padTop === this.box.padTop && box.padBottom === this.box.padBottom && box.gap === this.box.gap) return;
    this.box = box;
    this.dirty = true;
  }

  get count(): number {
    return this.entries.length;
  }

  keyAt(i: number): string | undefined {
    return this.entries[i]?.key;
  }

  indexOf(key: string): number | undefined {
    return this.index.get(key);
  }

  /** Whether `key`'s height was measured (rather than estimated). */
  isMeasured(key: string): boolean {
    return this.measured.has(key);
  }

  /** Records `key`'s drawn height; true when it differs from what the geometry assumed. */
  measure(key: string, height: number): boolean {
    const i = this.index.get(key);
    if (i === undefined) return false;
    const before = this.height(i);
    const old = this.measured.get(key);
    const kind = this.entries[i]?.kind ?? '';
    const k = this.perKind.get(kind) ?? { sum: 0, n: 0 };
    if (old !== undefined) {
      k.sum -= old;
      k.n -= 1;
      this.measuredSum -= old;
    }
    k.sum += height;
    k.n += 1;
    this.perKind.set(kind, k);
    this.measuredSum += height;
    this.measured.set(key, height);
    // A new sample moves the estimate of every unmeasured entry of its kind.
    this.dirty = true;
    return Math.abs(before - height) > 0.01;
  }

  /** Entry i's height: measured, else the mean of its kind's measured ones, else of all. */
  height(i: number): number {
    const e = this.entries[i];
    if (e === undefined) return 0;
    const m = this.measured.get(e.key);
    if (m !== undefined) return m;
    const k = this.perKind.get(e.kind);
    if (k && k.n > 0) return k.sum / k.n;
    return this.measured.size > 0 ? this.measuredSum / this.measured.size : DEFAULT_HEIGHT;
  }

  top(i: number): number {
    this.build();
    return this.tops[Math.max(0, Math.min(i, this.entries.length))] ?? 0;
  }

  bottom(i: number): number {
    return this.top(i) + this.height(i);
  }

  /** The height of entries `from` to `to - 1` with the gaps between them: what a spacer in their place takes. */
  span(from: number, to: number): number {
    if (to <= from) return 0;
    return this.top(to) - this.box.gap - this.top(from);
  }

  /** The log's scroll height. */
  get scrollHeight(): number {
    const n = this.entries.length;
    return n === 0 ? this.box.padTop + this.box.padBottom : this.bottom(n - 1) + this.box.padBottom;
  }

  /** The scroll position that shows the end of the log in a view `height` tall. */
  bottomScroll(height: number): number {
    return Math.max(0, this.scrollHeight - height);
  }

  /** The entry at `y`: the last one whose top is at or above it (the first when above them all); -1 when there are none. */
  indexAt(y: number): number {
    const n = this.entries.length;
    if (n === 0) return -1;
    this.build();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.tops[mid] ?? 0) <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The entries a view needs, with its margin: [first, end). Empty when there are none. */
  range(v: Viewport): { first: number; end: number } {
    const n = this.entries.length;
    if (n === 0) return { first: 0, end: 0 };
    const from = v.scrollTop - v.margin;
    const to = v.scrollTop + v.height + v.margin;
    // The first entry whose bottom is below `from`: the one at `from`, or the next when `from` is in the gap after it.
    let first = this.indexAt(from);
    if (this.bottom(first) <= from && first < n - 1) first += 1;
    let end = this.indexAt(to) + 1;
    if (this.top(end - 1) >= to && end - 1 > first) end -= 1;
    return { first, end: Math.max(end, first + 1) };
  }

  /** Where `scrollTop` is, as an offset from the entry at it. */
  anchorAt(scrollTop: number): Anchor | undefined {
    const i = this.indexAt(scrollTop);
    const key = this.entries[i]?.key;
    return key === undefined ? undefined : { key, offset: scrollTop - this.top(i) };
  }

  /** The scroll position that puts `a` where it was; undefined when its entry is gone. */
  scrollFor(a: Anchor): number | undefined {
    const i = this.index.get(a.key);
    return i === undefined ? undefined : this.top(i) + a.offset;
  }

  private build(): void {
    if (!this.dirty) return;
    const n = this.entries.length;
    if (this.tops.length < n + 1) this.tops = new Float64Array(Math.max(n + 1, this.tops.length * 2));
    let y = this.box.padTop;
    for (let i = 0; i < n; i++) {
      this.tops[i] = y;
      y += this.height(i) + this.box.gap;
    }
    this.tops[n] = y;
    this.dirty = false;
  }

  private prune(): void {
    for (const key of [...this.measured.keys()]) {
      if (this.index.has(key)) continue;
      this.measuredSum -= this.measured.get(key) ?? 0;
      this.measured.delete(key);
    }
    // The per-kind means keep the pruned samples: they are still good estimates.
  }
}

/**
 * The indices to draw: the entries `view` needs (`first`..`end`), and the
 * `pinned` ones wherever they are (a pending approval, the entry with the
 * keyboard), in order.
 */
export function drawnIndices(range: { first: number; end: number }, pinned: Iterable<number>): number[] {
  const out = new Set<number>();
  for (let i = range.first; i < range.end; i++) out.add(i);
  for (const p of pinned) out.add(p);
  return [...out].sort((a, b) => a - b);
}
