// A tiny element builder: enough to write views as plain functions without a
// framework. Text always goes in as text nodes (never HTML); the only HTML the
// app inserts is sanitised markdown, in chat/markdown.ts.

/** Attributes and listeners for `h`. `on…` keys become event listeners. */
export type Props = Record<string, string | number | boolean | undefined | ((ev: Event) => void)>;

/** A child: a node, text, or nothing. */
export type Child = Node | string | null | undefined | false;

/** Creates an element with attributes, listeners and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === 'class') {
      el.className = String(value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Shows or hides `el`, touching it only for a change: Chromium restyles an element for a same-value write too. */
export function setHidden(el: HTMLElement, hidden: boolean): void {
  if (el.hidden !== hidden) el.hidden = hidden;
}

/** Appends children, skipping empty ones. */
export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
}

/**
 * An icon drawn inline from SVG path data (an emoji or a symbol character
 * renders as an empty box where no font has it). Hidden from screen
 * readers: the control around it carries the name.
 */
export function svgIcon(paths: readonly string[], attrs: Record<string, string>): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  for (const [k, v] of Object.entries({ ...attrs, 'aria-hidden': 'true' })) svg.setAttribute(k, v);
  for (const d of paths) {
    const path = document.createElementNS(ns, 'path');
    path.setAttribute('d', d);
    svg.append(path);
  }
  return svg;
}
