// @vitest-environment jsdom
// The chat follows new content unless the reader scrolled up, and its status
// line links to a waiting approval.
import { describe, expect, it, vi } from 'vitest';
import { ChatView } from '../src/chat/view';
import { initialChatState, reduceAll } from '../src/chat/state';
import { loadQwenEvents } from './fixture';

const events = loadQwenEvents();
const req = events.findIndex((m) => JSON.stringify(m.event).startsWith('{"type":"control_request"'));
const ctx = { channel: { kind: 'dual_output', events: true, submit: true, approve: true }, connected: true, resumable: false };

function view() {
  const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn(() => Promise.resolve()) };
  const v = new ChatView(cb);
  document.body.replaceChildren(v.root);
  return v;
}

/** jsdom has no layout: give the log a fixed box and a content height. */
function fakeLayout(log: HTMLElement, content: () => number): void {
  Object.defineProperty(log, 'clientHeight', { configurable: true, get: () => 300 });
  Object.defineProperty(log, 'scrollHeight', { configurable: true, get: content });
}

describe('the chat follows new content', () => {
  it('sticks to the bottom unless the reader scrolled up', () => {
    const v = view();
    const log = v.root.querySelector<HTMLElement>('.chat-log');
    if (!log) throw new Error('no log');
    let height = 1000;
    fakeLayout(log, () => height);
    v.render(reduceAll(initialChatState, events.slice(0, 5)), ctx);
    expect(log.scrollTop).toBe(700);
    expect(v.following).toBe(true);
    // More content: still following.
    height = 1500;
    v.render(reduceAll(initialChatState, events.slice(0, 8)), ctx);
    expect(log.scrollTop).toBe(1200);
    // The reader scrolls up: new content leaves the view where it is.
    log.scrollTop = 200;
    log.dispatchEvent(new Event('scroll'));
    expect(v.following).toBe(false);
    height = 2000;
    v.render(reduceAll(initialChatState, events), ctx);
    expect(log.scrollTop).toBe(200);
    // Back at the bottom: following again.
    log.scrollTop = 1700;
    log.dispatchEvent(new Event('scroll'));
    expect(v.following).toBe(true);
  });

  it('links the status line to a waiting approval', () => {
    const v = view();
    v.render(reduceAll(initialChatState, events.slice(0, req + 1)), ctx);
    const jump = v.root.querySelector<HTMLButtonElement>('.status-jump');
    expect(jump?.hidden).toBe(false);
    expect(jump?.textContent).toBe('Waiting for your approval');
    const scrolled = vi.fn();
    Element.prototype.scrollIntoView = scrolled;
    jump?.click();
    expect(scrolled).toHaveBeenCalled();
    expect(document.activeElement?.classList.contains('approval')).toBe(true);
    v.render(reduceAll(initialChatState, events), ctx);
    expect(jump?.hidden).toBe(true);
  });
});
