// The small pure helpers: diff, tool presentation, backoff, flow control, frame guards.
import { describe, expect, it } from 'vitest';
import { diffLines, splitLines } from '../src/chat/diff';
import { presentTool, toolSummary } from '../src/chat/tools';
import { backoffDelay, defaultBackoff } from '../src/net/backoff';
import { FlowControl } from '../src/terminal/flow';
import { isMe, isProfileInfo, isSessionInfo, parseServerMessage } from '../src/net/guards';
import { blocksOf, canUseTool, knownDelta, knownEvent, knownStreamEvent } from '../src/chat/sidecar';

describe('diffLines', () => {
  it('marks added and removed lines around common context', () => {
    expect(diffLines('a\nb\nc\n', 'a\nB\nc\nd\n')).toEqual([
      { op: 'same', text: 'a' },
      { op: 'del', text: 'b' },
      { op: 'add', text: 'B' },
      { op: 'same', text: 'c' },
      { op: 'add', text: 'd' },
    ]);
  });
  it('treats a new file as all added', () => {
    expect(diffLines('', 'x\ny')).toEqual([{ op: 'add', text: 'x' }, { op: 'add', text: 'y' }]);
    expect(splitLines('')).toEqual([]);
  });
  it('keeps unchanged text unchanged', () => {
    expect(diffLines('one\ntwo', 'one\ntwo').every((l) => l.op === 'same')).toBe(true);
  });
  it('finds the longest common subsequence in the middle', () => {
    const d = diffLines('x\n1\n2\n3\ny', 'x\n2\n3\n4\ny');
    expect(d.filter((l) => l.op === 'same').map((l) => l.text)).toEqual(['x', '2', '3', 'y']);
  });
  it('degrades instead of stalling on huge inputs', () => {
    const big = Array.from({ length: 3000 }, (_, i) => `l${i}`).join('\n');
    const other = Array.from({ length: 3000 }, (_, i) => `m${i}`).join('\n');
    const d = diffLines(big, other);
    expect(d).toHaveLength(6000);
  });
});

describe('presentTool', () => {
  it('shows shell commands, edits and writes by shape', () => {
    expect(presentTool({ command: 'ls -la', description: 'list' })).toEqual({ kind: 'shell', command: 'ls -la', description: 'list' });
    const edit = presentTool({ file_path: 'a.txt', old_string: 'x', new_string: 'y' });
    expect(edit).toEqual({ kind: 'edit', path: 'a.txt', before: 'x', after: 'y' });
    expect(toolSummary(edit)).toBe('a.txt');
    expect(toolSummary(presentTool({ file_path: '/tmp/w/notes.txt', content: '' }))).toBe('notes.txt');
    expect(presentTool({ file_path: 'n.txt', content: 'hi' })).toEqual({ kind: 'write', path: 'n.txt', content: 'hi' });
    expect(presentTool({ pattern: '*.rs' })).toEqual({ kind: 'json', text: '{\n  "pattern": "*.rs"\n}' });
    expect(presentTool({})).toEqual({ kind: 'json', text: '' });
    expect(presentTool(null).kind).toBe('json');
  });
});

describe('backoffDelay', () => {
  it('doubles up to the cap, with jitter in the upper half', () => {
    const lo = { ...defaultBackoff, random: () => 0 };
    const hi = { ...defaultBackoff, random: () => 0.999 };
    expect(backoffDelay(0, lo)).toBe(250);
    expect(backoffDelay(0, hi)).toBeLessThanOrEqual(500);
    expect(backoffDelay(3, lo)).toBe(2000);
    expect(backoffDelay(50, hi)).toBeLessThanOrEqual(15_000);
    expect(backoffDelay(50, lo)).toBe(7500);
  });
});

describe('FlowControl', () => {
  it('pauses above the high watermark and resumes below the low one', () => {
    const signals: boolean[] = [];
    const f = new FlowControl((p) => signals.push(p), { high: 100, low: 10 });
    f.written(60);
    f.written(60);
    expect(signals).toEqual([true]);
    f.written(60);
    expect(signals).toEqual([true]); // once
    f.rendered(60);
    f.rendered(60);
    expect(signals).toEqual([true]);
    f.rendered(55);
    expect(signals).toEqual([true, false]);
    expect(f.isPaused).toBe(false);
  });
  it('re-pauses a new connection when still busy', () => {
    const signals: boolean[] = [];
    const f = new FlowControl((p) => signals.push(p), { high: 100, low: 10 });
    f.written(500);
    f.reconnected();
    expect(signals).toEqual([true, true]);
  });
});

describe('parseServerMessage', () => {
  it('accepts well-formed frames and fills serde defaults', () => {
    expect(parseServerMessage('{"type":"event","seq":3,"event":{"type":"user"}}')).toEqual({ type: 'event', seq: 3, event: { type: 'user' } });
    expect(parseServerMessage('{"type":"ack","id":"s1"}')).toEqual({ type: 'ack', id: 's1', queued: false });
    expect(parseServerMessage('{"type":"approval","request_id":"r","tool_name":"t","input":{},"state":"allowed","decided_by":"terminal","seq":4}')?.type).toBe('approval');
  });
  it('rejects malformed and unknown frames', () => {
    expect(parseServerMessage('nope')).toBeUndefined();
    expect(parseServerMessage('[]')).toBeUndefined();
    expect(parseServerMessage('{"type":"event","seq":"3"}')).toBeUndefined();
    expect(parseServerMessage('{"type":"approval","request_id":"r","tool_name":"t","input":{},"state":"maybe","seq":4}')).toBeUndefined();
    expect(parseServerMessage('{"type":"future_thing"}')).toBeUndefined();
  });
});

describe('the guards and the new protocol fields', () => {
  const channel = { kind: 'dual_output', events: true, submit: true, approve: true };
  it('fills an approval’s serde defaults and checks its options', () => {
    const a = parseServerMessage('{"type":"approval","request_id":"r","tool_name":"t","input":{},"state":"pending","seq":4}');
    expect(a).toMatchObject({ options: [], confirmed: false });
    const withOptions = '{"type":"approval","request_id":"r","tool_name":"t","input":{},"state":"allowed","decided_by":"client","chosen":"o1","confirmed":false,"seq":4,"options":[{"id":"o1","label":"Yes","kind":"allow_once"}]}';
    expect(parseServerMessage(withOptions)).toMatchObject({ chosen: 'o1', options: [{ id: 'o1', label: 'Yes', kind: 'allow_once' }] });
    expect(parseServerMessage(withOptions.replace('allow_once', 'maybe'))).toBeUndefined();
  });
  it('wants the channel in a hello, a session and a profile', () => {
    const hello = { type: 'hello', session_id: 's', client_id: 1, role: 'owner', principal: 'owner', clients: [], protocol_version: 1, server_version: 'x', capabilities: [], profile: 'demo', status: 'running', cols: 80, rows: 24, last_seq: 0, approvals: [] };
    expect(parseServerMessage(JSON.stringify({ ...hello, channel }))).toBeDefined();
    expect(parseServerMessage(JSON.stringify(hello))).toBeUndefined();
    const info = { id: 's', profile: 'demo', status: 'exited', created_at: 1, cols: 80, rows: 24, last_seq: 0, pending_approvals: 0, clients: 0, channel, resumable: true };
    expect(isSessionInfo(info)).toBe(true);
    expect(isSessionInfo({ ...info, resumable: undefined })).toBe(false);
    expect(isSessionInfo({ ...info, channel: { kind: 'none' } })).toBe(false);
    expect(isProfileInfo({ name: 'shell', sidecar: false, default: false, channel: { kind: 'none', events: false, submit: false, approve: false }, resume: false })).toBe(true);
    expect(isMe({ name: 'owner', role: 'owner' })).toBe(true);
    expect(isMe({ name: 'share:x', role: 'viewer', session: 's', expires_at: 1 })).toBe(true);
    expect(isMe({ name: 'share:x', role: 'admin' })).toBe(false);
    expect(isMe({ name: 'share:x', role: 'viewer', session: 5 })).toBe(false);
  });
});

describe('sidecar events are checked against the generated types', () => {
  it('reads a modelled event as its type, and a known type with the wrong shape as unknown (as serde does)', () => {
    expect(knownEvent({ type: 'user', message: { role: 'user', content: 'hi' } })?.type).toBe('user');
    expect(knownEvent({ type: 'user' })).toBeUndefined();
    expect(knownEvent({ type: 'assistant', message: { role: 'assistant', content: 42 } })).toBeUndefined();
    expect(knownEvent({ type: 'result', is_error: 'yes' })).toBeUndefined();
    expect(knownEvent({ type: 'x-qwen-thought', subject: 's' })).toBeUndefined();
    expect(knownEvent({ type: 'control_response', response: { subtype: 'error', request_id: 'r' } })).toBeUndefined();
    expect(knownEvent({ type: 'control_response', response: { subtype: 'error', request_id: 'r', error: 'gone' } })?.type).toBe('control_response');
  });

  it('keeps only modelled blocks, deltas and tool requests', () => {
    expect(blocksOf([{ type: 'text', text: 'a' }, { type: 'image', src: 'x' }, { type: 'tool_use', id: 't', name: 'bash' }])).toEqual([
      { type: 'text', text: 'a' },
      { type: 'tool_use', id: 't', name: 'bash', input: null },
    ]);
    expect(blocksOf('plain')).toEqual([{ type: 'text', text: 'plain' }]);
    expect(knownDelta({ type: 'text_delta', text: 'x' })?.type).toBe('text_delta');
    expect(knownDelta({ type: 'text_delta', text: 1 })).toBeUndefined();
    expect(knownStreamEvent({ type: 'content_block_stop', index: -1 })).toBeUndefined();
    expect(canUseTool({ subtype: 'can_use_tool', tool_name: 'bash' })).toEqual({ subtype: 'can_use_tool', tool_name: 'bash', input: null });
    expect(canUseTool({ subtype: 'interrupt' })).toBeUndefined();
  });

  it('checks a tagged union by the branch its tag names, and fills the defaults of the first branch that fits', () => {
    // The tag picks the branch; that branch's fields must fit (the other branches are not tried).
    expect(blocksOf([{ type: 'tool_use', id: 't' }, { type: 'text', thinking: 'x' }, { type: 42 }, { id: 't', name: 'n' }])).toEqual([]);
    // An event frame: the event is a known event (its defaults filled, as serde would) or any object (kept as it is).
    const frame = (event: unknown) => JSON.stringify({ type: 'event', seq: 3, event });
    const known = parseServerMessage(frame({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'bash' }] } }));
    expect(known).toMatchObject({ event: { message: { content: [{ type: 'tool_use', input: null }] } } });
    expect(parseServerMessage(frame({ type: 'assistant', message: { role: 'assistant', content: 42 } }))).toMatchObject({ event: { message: { content: 42 } } });
    expect(parseServerMessage(frame({ type: 'x-new-kind', n: 1 }))).toMatchObject({ event: { type: 'x-new-kind', n: 1 } });
    expect(parseServerMessage(frame('not an object'))).toBeUndefined();
    expect(parseServerMessage(JSON.stringify({ type: 'event', seq: -1, event: {} }))).toBeUndefined();
  });
});
