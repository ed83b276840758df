// What a screen reader hears of new chat entries. The log is a feed whose
// entries come and go as the reader scrolls (only those near the view are
// drawn), so it cannot be the live region itself: every entry drawn on the
// way up would be read out as new. New entries of the transcript are told
// here instead, once each: a prompt, a reply once it has finished streaming,
// a tool call, a notice (an error assertively), how the program ended. A
// render that brings many at once (the history of a session just opened, a
// reconnect's catch-up) is the past, not news: nothing is read.
import { h } from '../ui/dom';
import { exitSentence } from './exit';
import type { ChatItem, ChatState } from './state';

/** More new entries than this in one render are a load, not news. */
const NEWS_MAX = 5;
/** A long reply is read up to here (the log has all of it). */
const MAX_CHARS = 400;

/** The two live regions (polite, and assertive for errors), visually hidden. */
export class Announcer {
  readonly root: HTMLElement;
  private readonly polite: HTMLElement;
  private readonly urgent: HTMLElement;
  /** Entries told (or past when first seen). */
  private readonly told = new Set<string>();
  private exitTold = false;

  constructor() {
    this.polite = h('div', { class: 'chat-announce', 'aria-live': 'polite', 'aria-atomic': 'false' });
    this.urgent = h('div', { class: 'chat-announce-urgent', role: 'alert' });
    this.root = h('div', { class: 'visually-hidden' }, this.polite, this.urgent);
  }

  /** Tells what is new in `state` since the last call; `quiet`: take it in without telling (a replay). */
  update(state: ChatState, quiet: boolean): void {
    // New entries are at the end: walk back to the first one told.
    const fresh: ChatItem[] = [];
    for (let i = state.items.length - 1; i >= 0; i--) {
      const item = state.items[i];
      if (!item) continue;
      if (this.told.has(item.id)) break;
      fresh.push(item);
    }
    fresh.reverse();
    const news = !quiet && fresh.length <= NEWS_MAX;
    const polite: string[] = [];
    const urgent: string[] = [];
    for (const item of fresh) {
      // A reply is told once it is whole (not token by token).
      if ((item.kind === 'assistant' || item.kind === 'thinking') && item.streaming && news) continue;
      this.told.add(item.id);
      if (!news) continue;
      const text = spoken(item);
      if (text === undefined) continue;
      (item.kind === 'notice' && item.level === 'error' ? urgent : polite).push(text);
    }
    if (state.exit && !this.exitTold) {
      this.exitTold = true;
      if (news) polite.push(`${exitSentence(state.exit)}.`);
    } else if (!state.exit) {
      this.exitTold = false;
    }
    if (polite.length > 0) this.polite.textContent = polite.join('\n');
    if (urgent.length > 0) this.urgent.textContent = urgent.join('\n');
  }
}

/** What is read for a new entry; undefined: nothing (thinking is the agent's own). */
function spoken(item: ChatItem): string | undefined {
  switch (item.kind) {
    case 'user':
      return `You: ${clip(item.text)}`;
    case 'assistant':
      return `Agent: ${clip(item.text)}`;
    case 'tool':
      return `Tool call: ${item.name}`;
    case 'notice':
      return item.count > 1 ? `${item.text} (×${String(item.count)})` : item.text;
    case 'thinking':
      return undefined;
  }
}

function clip(text: string): string {
  return text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}…` : text;
}
