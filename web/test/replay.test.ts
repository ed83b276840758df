// Replay's pure parts: the asciicast parser, and seeking (which frames and
// events belong to an instant, what the terminal is fed, the chat at that
// instant with its approval pending before the decision and decided after).
import { describe, expect, it } from 'vitest';
import { CastError, parseCast, resizeOf } from '../src/replay/cast';
import { advance, ChatTimeline, eventsUpTo, formatTime, framesUpTo, planFeed, replayEnd, sortEvents, type TimedEvent } from '../src/replay/timeline';
import { approvalOf, type ChatState, type ToolItem } from '../src/chat/state';

const cast = [
  JSON.stringify({ version: 2, width: 80, height: 24, timestamp: 1_700_000_000, env: { TERM: 'xterm-256color' } }),
  JSON.stringify([0.1, 'o', 'hello ']),
  'not json',
  JSON.stringify([0.5, 'i', 'typed']),
  JSON.stringify([1.25, 'r', '100x30']),
  JSON.stringify([2, 'o', 'world\r\n']),
  JSON.stringify([1.9, 'o', 'late']),
  JSON.stringify(['x', 'o', 'bad time']),
  '',
].join('\n');

describe('parseCast', () => {
  it('reads the header and the output and resize frames, skipping what is not a frame', () => {
    const c = parseCast(cast);
    expect(c.header).toEqual({ width: 80, height: 24, timestamp: 1_700_000_000 });
    expect(c.frames.map((f) => [f.t, f.kind, f.data])).toEqual([
      [0.1, 'o', 'hello '],
      [1.25, 'r', '100x30'],
      [2, 'o', 'world\r\n'],
      // An out-of-order time is moved up, so times never fall.
      [2, 'o', 'late'],
    ]);
    expect(c.skipped).toBe(2);
    expect(resizeOf(c.frames[1] ?? { t: 0, kind: 'r', data: '' })).toEqual({ cols: 100, rows: 30 });
    expect(resizeOf({ t: 0, kind: 'r', data: '0x5' })).toBeUndefined();
  });

  it('refuses a file that is not asciicast v2', () => {
    expect(() => parseCast('')).toThrow(CastError);
    expect(() => parseCast('{"version":1,"width":80,"height":24}')).toThrow(/version 2/);
    expect(() => parseCast('{"version":2,"width":0,"height":24}')).toThrow(/size/);
  });
});

const user = (text: string) => ({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } });
const ev = (seq: number, at: number, event: unknown): TimedEvent => ({ type: 'event', seq, at, event } as TimedEvent);
const events: TimedEvent[] = [
  ev(1, 100, { type: 'system', subtype: 'session_start', session_id: 's' }),
  ev(2, 1000, user('run ls')),
  ev(3, 1200, { type: 'assistant', message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] } }),
  ev(4, 1300, { type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'Bash', tool_use_id: 't1', input: { command: 'ls' } } }),
  ev(5, 4000, { type: 'control_response', response: { subtype: 'success', request_id: 'r1', response: { allowed: true } } }),
  ev(6, 4500, { type: 'assistant', message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'Done.' }] } }),
];

describe('seeking', () => {
  it('counts the frames and events of an instant', () => {
    const { frames } = parseCast(cast);
    expect(framesUpTo(frames, 0)).toBe(0);
    expect(framesUpTo(frames, 0.1)).toBe(1);
    expect(framesUpTo(frames, 1.9)).toBe(2);
    expect(framesUpTo(frames, 99)).toBe(4);
    expect(eventsUpTo(events, 0)).toBe(0);
    expect(eventsUpTo(events, 1.3)).toBe(4);
    expect(eventsUpTo(events, 3.999)).toBe(4);
    expect(eventsUpTo(events, 4)).toBe(5);
    expect(replayEnd(frames, events)).toBe(4.5);
    expect(replayEnd([], [])).toBe(0);
  });

  it('feeds forward, and resets to go back', () => {
    expect(planFeed(0, 3)).toEqual({ reset: false, from: 0, to: 3 });
    expect(planFeed(3, 5)).toEqual({ reset: false, from: 3, to: 5 });
    expect(planFeed(5, 5)).toEqual({ reset: false, from: 5, to: 5 });
    expect(planFeed(5, 2)).toEqual({ reset: true, from: 0, to: 2 });
  });

  it('shows the approval pending before its decision and decided after, forward and back', () => {
    const tl = new ChatTimeline(sortEvents(events));
    const before = tl.at(eventsUpTo(events, 2));
    expect(before.items.map((i) => i.kind)).toEqual(['user', 'tool']);
    const approvalState = (s: ChatState): string | undefined => {
      const tool = s.items.find((i): i is ToolItem => i.kind === 'tool');
      return tool && approvalOf(s, tool)?.state;
    };
    expect(approvalState(before)).toBe('pending');
    const after = tl.at(eventsUpTo(events, 5));
    expect(approvalState(after)).toBe('allowed');
    expect(after.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Done.' });
    // Back again: the same state as before, not a mix.
    const again = tl.at(eventsUpTo(events, 2));
    expect(again).toEqual(before);
    expect(tl.at(0).items).toEqual([]);
  });

  it('keeps checkpoints, so a long session seeks back to the same state', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ev(i + 1, i * 10, user(`prompt ${String(i)}`)));
    const tl = new ChatTimeline(many);
    const fresh = new ChatTimeline(many).at(700);
    tl.at(1000);
    expect(tl.at(700)).toEqual(fresh);
    expect(tl.at(700).items).toHaveLength(700);
  });

  it('plays at a speed, stopping at the end', () => {
    expect(advance(1, 8, 500, 100)).toBe(5);
    expect(advance(1, 1, 500, 1.2)).toBe(1.2);
    expect(advance(1, 2, -5, 10)).toBe(1);
    expect(formatTime(0)).toBe('0:00.0');
    expect(formatTime(65.25)).toBe('1:05.3');
    expect(formatTime(3725)).toBe('1:02:05');
  });
});
