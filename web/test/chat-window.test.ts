// @vitest-environment jsdom
// The windowed chat log: which entries have elements for a scroll position,
// that the entry at the top of the view keeps its place when heights become
// known, and that pinned entries are drawn wherever they are. The geometry
// is pure; the list runs in jsdom over a fake layout (jsdom has none): each
// entry is as tall as its key says, a spacer as its style says, stacked.
import { describe, expect, it } from 'vitest';
import { drawnIndices, Geometry } from '../src/chat/geometry';
import { EntryList, type Entry } from '../src/chat/entry-list';

describe('Geometry', () => {
  const placed = (kinds: readonly string[]) => kinds.map((kind, i) => ({ key: `e${String(i)}`, kind }));

  it('places entries from their heights, the padding and the gaps; unmeasured ones by their kind', () => {
    const g = new Geometry();
    g.setBox({ padTop: 10, padBottom: 20, gap: 5 });
    g.setEntries(placed(['user', 'tool', 'user', 'tool']));
    g.measure('e0', 30);
    g.measure('e1', 100);
    // e2 and e3 are estimated from the measured user and tool entries.
    expect(g.height(2)).toBe(30);
    expect(g.height(3)).toBe(100);
    expect(g.top(0)).toBe(10);
    expect(g.top(1)).toBe(45);
    expect(g.top(3)).toBe(10 + 30 + 5 + 100 + 5 + 30 + 5);
    // A spacer for e1..e2 is their heights and the one gap between them.
    expect(g.span(1, 3)).toBe(100 + 5 + 30);
    expect(g.scrollHeight).toBe(g.bottom(3) + 20);
  });

  it('gives the entries a view needs, with its margin', () => {
    const g = new Geometry();
    g.setEntries(placed(Array.from({ length: 100 }, () => 'x')));
    for (let i = 0; i < 100; i++) g.measure(`e${String(i)}`, 50);
    expect(g.range({ scrollTop: 1000, height: 200, margin: 0 })).toEqual({ first: 20, end: 24 });
    expect(g.range({ scrollTop: 1000, height: 200, margin: 100 })).toEqual({ first: 18, end: 26 });
    expect(g.range({ scrollTop: 0, height: 200, margin: 100 })).toEqual({ first: 0, end: 6 });
    expect(g.range({ scrollTop: g.bottomScroll(200), height: 200, margin: 0 })).toEqual({ first: 96, end: 100 });
  });

  it('keeps an anchor when heights above it change', () => {
    const g = new Geometry();
    g.setEntries(placed(Array.from({ length: 10 }, () => 'x')));
    const a = g.anchorAt(7 * 72 + 12);
    expect(a).toEqual({ key: 'e7', offset: 12 });
    g.measure('e2', 300);
    if (!a) throw new Error('no anchor');
    expect(g.scrollFor(a)).toBe(g.top(7) + 12);
    expect(g.top(7)).toBeGreaterThan(7 * 72);
  });

  it('indexes again only what changed, and keeps measured heights by key', () => {
    const g = new Geometry();
    g.setEntries(placed(['a', 'b', 'c']));
    g.measure('e1', 40);
    // e1 goes (a pending prompt that became the transcript's), e3 comes.
    g.setEntries([{ key: 'e0', kind: 'a' }, { key: 'e2', kind: 'c' }, { key: 'e3', kind: 'b' }]);
    expect(g.indexOf('e1')).toBeUndefined();
    expect(g.indexOf('e2')).toBe(1);
    expect(g.indexOf('e3')).toBe(2);
    // e3 is estimated from the b measured before.
    expect(g.height(2)).toBe(40);
    g.setEntries([{ key: 'e0', kind: 'a' }, { key: 'e2', kind: 'c' }, { key: 'e3', kind: 'b' }, { key: 'e1', kind: 'b' }]);
    expect(g.indexOf('e1')).toBe(3);
    expect(g.height(3)).toBe(40);
  });

  it('adds pinned entries to the range, in order', () => {
    expect(drawnIndices({ first: 5, end: 8 }, [1, 6, 40])).toEqual([1, 5, 6, 7, 40]);
  });
});

/** Entry i's real height (unknown to the list until it draws it). */
const realHeight = (i: number): number => 40 + (i % 7) * 13;
const VIEW = 400;

/** A fake layout over the log: children stacked, entries as tall as their key says, spacers as their style says. */
function fakeLayout(log: HTMLElement): { top: (el: Element) => number } {
  const heightOf = (el: Element): number => {
    const h = (el as HTMLElement).dataset.h;
    return h !== undefined ? Number(h) : Number.parseFloat((el as HTMLElement).style.height) || 0;
  };
  const top = (el: Element): number => {
    let y = 0;
    for (const c of log.children) {
      if (c === el) return y;
      y += heightOf(c);
    }
    throw new Error('not in the log');
  };
  Object.defineProperty(log, 'clientHeight', { configurable: true, get: () => VIEW });
  Object.defineProperty(log, 'scrollHeight', { configurable: true, get: () => [...log.children].reduce((s, c) => s + heightOf(c), 0) });
  let scroll = 0;
  Object.defineProperty(log, 'scrollTop', { configurable: true, get: () => scroll, set: (v: number) => { scroll = Math.max(0, Math.min(v, log.scrollHeight - VIEW)); } });
  Element.prototype.getBoundingClientRect = function (this: Element) {
    const t = this.parentElement === log ? top(this) - scroll : 0;
    const h = this.parentElement === log ? heightOf(this) : 0;
    return { top: t, bottom: t + h, height: h, left: 0, right: 0, width: 0, x: 0, y: t, toJSON: () => ({}) };
  };
  return { top };
}

function entries(n: number, pinned: readonly number[] = []): Entry[] {
  return Array.from({ length: n }, (_, i) => ({
    key: `k${String(i)}`,
    kind: 'msg',
    item: i,
    approval: undefined,
    ctxKey: '',
    pinned: pinned.includes(i),
    build: () => {
      const el = document.createElement('article');
      el.dataset.kind = 'msg';
      el.dataset.h = String(realHeight(i));
      el.textContent = `entry ${String(i)}`;
      return el;
    },
  }));
}

function setup(n: number, pinned: readonly number[] = []): { log: HTMLElement; list: EntryList; drawn: () => number[]; layout: ReturnType<typeof fakeLayout> } {
  const log = document.createElement('div');
  document.body.replaceChildren(log);
  const layout = fakeLayout(log);
  const list = new EntryList(log, () => undefined);
  list.set(entries(n, pinned));
  const drawn = (): number[] => [...log.querySelectorAll<HTMLElement>('[data-kind]')].map((e) => Number(e.getAttribute('aria-posinset')) - 1);
  return { log, list, drawn, layout };
}

/** The entry at the top of the view and how far the view's top is into it, read from the (fake) layout. */
function atTop(log: HTMLElement, layout: ReturnType<typeof fakeLayout>): { index: number; offset: number } {
  for (const el of log.querySelectorAll<HTMLElement>('[data-kind]')) {
    const t = layout.top(el);
    if (t <= log.scrollTop && t + Number(el.dataset.h) > log.scrollTop) return { index: Number(el.getAttribute('aria-posinset')) - 1, offset: log.scrollTop - t };
  }
  throw new Error('no drawn entry at the top of the view');
}

function scroll(log: HTMLElement, y: number): void {
  log.scrollTop = y;
  log.dispatchEvent(new Event('scroll'));
}

describe('EntryList', () => {
  it('draws only the newest entries of a long log, and knows the whole length', () => {
    const { log, list, drawn } = setup(3000);
    const d = drawn();
    expect(d.length).toBeGreaterThan(5);
    expect(d.length).toBeLessThan(60);
    expect(d.at(-1)).toBe(2999);
    expect(list.following).toBe(true);
    // At the end of the log, which is as tall as all its entries.
    expect(log.scrollTop).toBe(log.scrollHeight - VIEW);
    const last = log.querySelector('[aria-posinset="3000"]');
    expect(last?.getAttribute('aria-setsize')).toBe('3000');
  });

  it('draws the entries of the view when the reader scrolls, the first ones at the top', () => {
    const { log, list, drawn } = setup(3000);
    scroll(log, 0);
    expect(list.following).toBe(false);
    const d = drawn();
    expect(d[0]).toBe(0);
    expect(d).not.toContain(2999);
    expect(d.length).toBeLessThan(60);
    expect(log.querySelector('[data-kind]')?.textContent).toBe('entry 0');
  });

  it('keeps the entry at the top of the view in place while earlier ones are drawn and measured', () => {
    const { log, layout } = setup(3000);
    // Up, in steps: each draws entries never measured (their estimates were wrong).
    for (let i = 0; i < 12; i++) {
      const y = log.scrollTop - 350;
      log.scrollTop = y;
      const before = atTop(log, layout);
      log.dispatchEvent(new Event('scroll'));
      expect(atTop(log, layout)).toEqual(before);
    }
  });

  it('fills the view after a jump into entries never drawn (no blank part)', () => {
    const { log, layout } = setup(3000);
    scroll(log, log.scrollHeight / 2);
    // The top and the bottom of the view are in drawn entries, not in a spacer.
    expect(() => atTop(log, layout)).not.toThrow();
    const last = [...log.querySelectorAll<HTMLElement>('[data-kind]')].at(-1);
    if (!last) throw new Error('nothing drawn');
    expect(layout.top(last) + Number(last.dataset.h)).toBeGreaterThan(log.scrollTop + VIEW);
  });

  it('draws a pinned entry wherever the view is, in its place', () => {
    const { log, drawn } = setup(3000, [3]);
    expect(drawn()).toContain(3);
    expect(drawn()).not.toContain(4);
    const pinned = log.querySelector<HTMLElement>('[aria-posinset="4"]');
    expect(pinned?.previousElementSibling?.classList.contains('chat-spacer')).toBe(true);
  });

  it('keeps following the end as entries come', () => {
    const { log, list, drawn } = setup(500);
    list.set(entries(520));
    expect(drawn().at(-1)).toBe(519);
    expect(log.scrollTop).toBe(log.scrollHeight - VIEW);
  });
});
