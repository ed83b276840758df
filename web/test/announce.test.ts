// @vitest-environment jsdom
// What a screen reader hears of the chat: the log is a feed whose entries say
// their place in the whole (it is longer than what is drawn), and new entries
// are told once by a live region of their own — not the history a page loads,
// not a reply token by token, an error assertively.
import { describe, expect, it, vi } from 'vitest';
import { Announcer } from '../src/chat/announce';
import { initialChatState, reduce, reduceAll, type ChatState } from '../src/chat/state';
import { ChatView } from '../src/chat/view';
import type { ServerMessage } from '../src/generated/protocol';
import { loadQwenEvents } from './fixture';

const events = loadQwenEvents();
const user = (seq: number, text: string): ServerMessage => ({ type: 'event', seq, event: { type: 'user', uuid: `u${String(seq)}`, message: { role: 'user', content: [{ type: 'text', text }] } } });
const delta = (seq: number, ev: unknown): ServerMessage => ({ type: 'event', seq, event: { type: 'stream_event', event: ev } as never });

describe('Announcer', () => {
  const polite = (a: Announcer) => a.root.querySelector('[aria-live="polite"]')?.textContent ?? '';
  const urgent = (a: Announcer) => a.root.querySelector('[role="alert"]')?.textContent ?? '';

  it('tells nothing of a history loaded at once, then each new entry once', () => {
    const a = new Announcer();
    let s = reduceAll(initialChatState, events);
    a.update(s, false);
    expect(polite(a)).toBe('');
    s = reduce(s, user(events.length + 1, 'a new prompt'));
    a.update(s, false);
    expect(polite(a)).toBe('You: a new prompt');
    // The same state again tells nothing new.
    a.update(s, false);
    expect(polite(a)).toBe('You: a new prompt');
  });

  it('tells a streamed reply once it is whole, and an error assertively', () => {
    const a = new Announcer();
    let s: ChatState = reduce(initialChatState, user(1, 'hi'));
    a.update(s, false);
    let seq = 1;
    for (const ev of [
      { type: 'message_start', message: { id: 'm1', role: 'assistant', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello ' } },
    ]) s = reduce(s, delta(++seq, ev));
    a.update(s, false);
    expect(polite(a)).toBe('You: hi');
    for (const ev of [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'there' } }, { type: 'content_block_stop', index: 0 }]) s = reduce(s, delta(++seq, ev));
    a.update(s, false);
    expect(polite(a)).toBe('Agent: Hello there');
    s = reduce(s, { type: 'local_notice', level: 'error', text: 'it broke' });
    a.update(s, false);
    expect(urgent(a)).toBe('it broke');
  });

  it('is quiet in a replay', () => {
    const a = new Announcer();
    a.update(initialChatState, true);
    a.update(reduce(initialChatState, user(1, 'hi')), true);
    expect(polite(a)).toBe('');
  });
});

describe('the log as a feed', () => {
  it('is a feed of articles, each with its place in the whole log', () => {
    const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn(() => Promise.resolve()) };
    const v = new ChatView(cb);
    document.body.replaceChildren(v.root);
    const s = reduceAll(initialChatState, events);
    v.render(s, { channel: { kind: 'dual_output', events: true, submit: true, approve: true }, connected: true, resumable: false });
    const log = v.root.querySelector('.chat-log');
    expect(log?.getAttribute('role')).toBe('feed');
    // Its own additions come with scrolling: it is not a live region.
    expect(log?.getAttribute('aria-live')).toBeNull();
    const entries = [...(log?.querySelectorAll(':scope > [data-kind]') ?? [])];
    expect(entries.length).toBe(s.items.length);
    entries.forEach((e, i) => {
      expect(e.tagName === 'ARTICLE' || e.getAttribute('role') === 'article').toBe(true);
      expect(e.getAttribute('aria-posinset')).toBe(String(i + 1));
      expect(e.getAttribute('aria-setsize')).toBe(String(s.items.length));
    });
  });
});
