// How the workspace shows the two panes (split, chat alone, terminal alone):
// the top bar's segmented control, and the choice remembered in this
// browser (localStorage) across reloads and tabs.
import { h } from './dom';

/** How the workspace shows the two panes. */
export type Layout = 'split' | 'terminal' | 'chat';

const LAYOUT_KEY = 'duet.layout';

/** The layout chosen last in this browser (split when none). */
export function savedLayout(): Layout {
  const v = localStorage.getItem(LAYOUT_KEY);
  return v === 'terminal' || v === 'chat' ? v : 'split';
}

/** The Split / Chat / Terminal control; `chosen` runs on a click. */
export class LayoutSwitch {
  readonly root: HTMLElement;
  private readonly buttons = new Map<Layout, HTMLButtonElement>();

  constructor(chosen: (layout: Layout) => void) {
    this.root = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Layout' });
    for (const [layout, label] of [['split', 'Split'], ['chat', 'Chat'], ['terminal', 'Terminal']] as const) {
      const b = h('button', { type: 'button', class: 'seg', 'data-layout': layout, onclick: () => { chosen(layout); } }, label);
      this.buttons.set(layout, b);
      this.root.append(b);
    }
  }

  /** Hidden for a terminal-only program: there is nothing to choose. */
  set hidden(hidden: boolean) {
    this.root.hidden = hidden;
  }

  /** Shows `layout` as the pressed one and remembers it. */
  show(layout: Layout): void {
    localStorage.setItem(LAYOUT_KEY, layout);
    for (const [l, b] of this.buttons) b.setAttribute('aria-pressed', String(l === layout));
  }
}
