// @vitest-environment jsdom
// A resumed session's earlier conversation: the NDJSON history becomes one
// closed segment per earlier session, rendered above the session's own chat.
import { describe, expect, it, vi } from 'vitest';
import { historySegments } from '../src/chat/history';
import { initialChatState, reduce } from '../src/chat/state';
import { ChatView } from '../src/chat/view';

const user = (text: string) => ({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } });
const assistant = (id: string, text: string) => ({ type: 'assistant', message: { id, role: 'assistant', content: [{ type: 'text', text }] } });
const line = (session: string, seq: number, event: unknown) => JSON.stringify({ session, seq, event });

const A = 'aaaaaaaa-0000-0000-0000-000000000000';
const B = 'bbbbbbbb-0000-0000-0000-000000000000';
const ndjson = [
  line(A, 1, user('hello one')),
  line(A, 2, assistant('m1', 'Echo: hello one')),
  // A tool call left waiting when A ended.
  line(A, 3, { type: 'assistant', message: { id: 'm2', role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] } }),
  line(A, 4, { type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Bash', tool_use_id: 't1', input: { command: 'ls' } } }),
  'not json',
  line(B, 1, user('hello two')),
  line(B, 2, assistant('m1', 'Echo: hello two')),
  '',
].join('\n');

describe('historySegments', () => {
  it('makes one closed segment per earlier session, in order', () => {
    const segs = historySegments(ndjson);
    expect(segs.map((s) => s.session)).toEqual([A, B]);
    const [first, second] = segs;
    if (!first || !second) throw new Error('two segments');
    const a = first.state;
    expect(a.items.flatMap((i) => (i.kind === 'user' ? [i.text] : []))).toEqual(['hello one']);
    // Nothing in an ended session waits or streams.
    expect(a.approvals.r1?.state).toBe('abandoned');
    expect(a.stream).toBeNull();
    expect(a.awaitingReply).toBe(false);
    // The same message id in two sessions stays two messages.
    expect(second.state.items.some((i) => i.kind === 'assistant' && i.text === 'Echo: hello two')).toBe(true);
  });

  it('is empty for a session that resumed nothing', () => {
    expect(historySegments('')).toEqual([]);
  });
});

describe('ChatView with history', () => {
  it('shows the earlier sessions above the note and the new chat, without live controls', () => {
    const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn(() => Promise.resolve()) };
    const v = new ChatView(cb);
    document.body.replaceChildren(v.root);
    const state = reduce(initialChatState, { type: 'event', seq: 1, event: user('hello three') });
    const channel = { kind: 'stream_json', events: true, submit: true, approve: true };
    v.render(state, { channel, connected: true, resumable: false, resumedFrom: B, history: historySegments(ndjson) });
    const log = v.root.querySelector<HTMLElement>('.chat-log');
    if (!log) throw new Error('no chat log');
    const order = [...log.querySelectorAll<HTMLElement>(':scope > :not([hidden])')].map((e) => (e.classList.contains('history-heading') ? `heading:${e.dataset.sessionId ?? ''}` : e.classList.contains('resumed-note') ? 'note' : e.textContent.trim()));
    const at = (s: string) => order.findIndex((o) => o.includes(s));
    expect(at(`heading:${A}`)).toBe(0);
    expect(at('hello one')).toBeGreaterThan(at(`heading:${A}`));
    expect(at(`heading:${B}`)).toBeGreaterThan(at('hello one'));
    expect(at('hello two')).toBeGreaterThan(at(`heading:${B}`));
    expect(at('note')).toBeGreaterThan(at('hello two'));
    expect(at('hello three')).toBeGreaterThan(at('note'));
    // The approval of an ended session cannot be answered.
    expect(log.querySelectorAll('.approval button:not([disabled])')).toHaveLength(0);
  });
});
