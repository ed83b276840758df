// The history fetched over HTTP on a session's first connection: its NDJSON
// read as the socket reads its frames, and the socket's events held until it
// is applied, so that the chat ends with every event once, in order, whatever
// arrived first.
import { describe, expect, it } from 'vitest';
import { HeldEvents, parseEvents } from '../src/net/backlog';
import { initialChatState, reduce, reduceAll, type ChatState } from '../src/chat/state';
import type { ServerMessage } from '../src/generated/protocol';
import { loadQwenEvents } from './fixture';

const events = loadQwenEvents();
const transcript = (s: ChatState): string[] => s.items.map((i) => `${i.kind} ${i.id} ${'text' in i ? i.text : ''}`);

describe('parseEvents', () => {
  it('keeps the event messages that check, in order, and skips the rest', () => {
    const lines = [JSON.stringify(events[0]), '{"type":"hello"}', 'not json', '', JSON.stringify({ type: 'event', seq: -1, event: {} }), JSON.stringify(events[1])];
    expect(parseEvents(lines.join('\n')).map((m) => (m.type === 'event' ? m.seq : -1))).toEqual([1, 2]);
  });
});

describe('HeldEvents', () => {
  // The history over HTTP goes up to `upTo`; the socket, connected from there, brings the rest.
  const upTo = Math.floor(events.length / 2);
  const http = events.slice(0, upTo);
  const socket: ServerMessage[] = [{ type: 'warning', id: 1, code: 'x', message: 'a warning' }, ...events.slice(upTo)];
  const whole = reduceAll(initialChatState, [...http, ...socket]);

  it('holds what the socket brings while the history is on its way, and applies it after', () => {
    const held = new HeldEvents();
    const generation = held.begin(upTo);
    expect(held.upTo).toBe(upTo);
    let state = initialChatState;
    // The socket is faster: all of its events arrive first.
    for (const m of socket) if (!held.hold(m)) state = reduce(state, m);
    expect(state.lastSeq).toBe(0);
    const later = held.finish(generation);
    if (!later) throw new Error('the history still counts');
    for (const m of [...http, ...later]) state = reduce(state, m);
    expect(state.lastSeq).toBe(events.length);
    expect(transcript(state)).toEqual(transcript(whole));
    // Holding is over: the socket's messages go straight through, and the socket resumes from the state.
    const next = socket[1];
    if (!next) throw new Error('no event after the warning');
    expect(held.hold(next)).toBe(false);
    expect(held.upTo).toBe(0);
  });

  it('lets what is not an event through, and lets a cancelled history go', () => {
    const held = new HeldEvents();
    const generation = held.begin(upTo);
    expect(held.hold({ type: 'pong' })).toBe(false);
    expect(held.hold(events[upTo] as ServerMessage)).toBe(true);
    held.cancel();
    expect(held.finish(generation)).toBeUndefined();
    expect(held.upTo).toBe(0);
    // A new history: the old one's answer no longer counts.
    const second = held.begin(3);
    expect(held.finish(generation)).toBeUndefined();
    expect(held.finish(second)).toEqual([]);
  });
});
