// The event → chat-state reducer, fed with the real Qwen Code stream.
import { describe, expect, it } from 'vitest';
import type { Approval, JsonValue, ServerMessage, SidecarEvent } from '../src/generated/protocol';
import {
  chatStatus,
  initialChatState,
  isSlashCommand,
  liveText,
  reduce,
  reduceAll,
  type ChatInput,
} from '../src/chat/state';
import { seqOf, type EventMessage } from './fixture';
import { isObject } from '../src/chat/json';

import { events, REQUEST_ID, at, typeOf, innerType, upTo, transcript, tools, helloMessage, approvalMessage } from './qwen-chat';
describe('the recorded Qwen Code stream', () => {
  const final = reduceAll(initialChatState, events);

  it('has the three prompts, the final assistant texts and two tool cards, in order', () => {
    const t = transcript(final);
    expect(t).toHaveLength(8);
    expect(t[0]).toBe('user: hi');
    expect(t[1]).toBe('assistant: Hello from mock');
    expect(t[2]).toBe('user: please run touch');
    expect(t[3]).toBe('tool run_shell_command [done]');
    expect(t[4]).toMatch(/^assistant: Tool finished: Command: touch made_by_tool.txt && ls \| /);
    expect(t[5]).toBe('user: please run ls');
    expect(t[6]).toBe('tool run_shell_command [done]');
    expect(t[7]).toMatch(/^assistant: Tool finished: Command: ls -la \| /);
    expect(final.lastSeq).toBe(events.length);
  });

  it('replaces the streamed text with the final message', () => {
    // In the recording the final text equals the streamed one; the item is final now.
    const finalText = final.items[4];
    expect(finalText).toMatchObject({ kind: 'assistant', streaming: false });
    // A final message that differs from what streamed wins, in place.
    const firstFinal = seqOf(events, (e) => typeOf(e) === 'assistant');
    const edited = events.map((m) =>
      m.seq === firstFinal ? { ...m, event: JSON.parse(JSON.stringify(m.event).replace('Hello from mock', 'Hello, corrected')) as SidecarEvent } : m,
    );
    const t = transcript(reduceAll(initialChatState, edited));
    expect(t[1]).toBe('assistant: Hello, corrected');
    expect(t).toHaveLength(8);
  });

  it('attaches inputs, approvals and results to the tool cards', () => {
    const [touch, ls] = tools(final);
    expect(touch?.toolUseId).toBe('call_mock_7');
    expect(touch?.input).toEqual({ command: 'touch made_by_tool.txt && ls', description: 'Create a file and list' });
    expect(touch?.requestId).toBe(REQUEST_ID);
    expect(final.approvals[REQUEST_ID]?.state).toBe('allowed');
    expect(touch?.result).toEqual({ isError: false, content: 'made_by_tool.txt' });

    // Read-only tools run without asking: no control_request, no approval.
    expect(ls?.toolUseId).toBe('call_mock_9');
    expect(ls?.requestId).toBeUndefined();
    expect(ls?.input).toEqual({ command: 'ls -la', description: 'List files in the current directory' });
    expect(typeof ls?.result?.content === 'string' && ls.result.content.startsWith('total 8')).toBe(true);
    expect(Object.keys(final.approvals)).toEqual([REQUEST_ID]);
  });

  it('ends idle, with the handshake kept', () => {
    expect(chatStatus(final)).toBe('idle');
    expect(isObject(final.agent) && final.agent.version).toBe('0.15.10');
  });

  it('walks the status line through a turn', () => {
    const firstUser = seqOf(events, (e) => typeOf(e) === 'user');
    expect(chatStatus(upTo(firstUser))).toBe('thinking');
    expect(chatStatus(upTo(firstUser + 1))).toBe('thinking'); // message_start, no delta yet
    expect(chatStatus(upTo(firstUser + 3))).toBe('responding'); // first text_delta
    const req = seqOf(events, (e) => typeOf(e) === 'control_request');
    expect(chatStatus(upTo(req))).toBe('awaiting_approval');
    expect(tools(upTo(req))[0]?.status).toBe('awaiting_approval');
    expect(chatStatus(upTo(req + 1))).toBe('running_tool'); // allowed, no result yet
    expect(tools(upTo(req + 1))[0]?.status).toBe('running');
    expect(chatStatus(upTo(req + 2))).toBe('thinking'); // result went back to the model
  });

  it('streams token by token before the final message', () => {
    const beforeFinal = upTo(seqOf(events, (e) => typeOf(e) === 'assistant') - 1);
    const item = beforeFinal.items.at(-1);
    expect(item?.kind).toBe('assistant');
    expect(item?.kind === 'assistant' && item.text).toBe('Hello from mock');
    expect(item?.kind === 'assistant' && item.streaming).toBe(false); // content_block_stop came
    const midway = upTo(seqOf(events, (e) => innerType(e) === 'content_block_delta'));
    const open = midway.items.at(-1);
    expect(open).toMatchObject({ kind: 'assistant', streaming: true });
    if (!open) throw new Error('no item');
    expect(liveText(midway, open)).toBe('Hello ');
  });

  it('costs O(1) per token: a delta leaves the transcript array alone', () => {
    const first = seqOf(events, (e) => innerType(e) === 'content_block_delta');
    const before = upTo(first);
    const next = events[first];
    if (!next) throw new Error('fixture too short');
    const after = reduce(before, next);
    expect(after.items).toBe(before.items);
    const open = after.items.at(-1);
    if (!open) throw new Error('no item');
    expect(liveText(after, open).length).toBeGreaterThan(liveText(before, open).length);
  });

  it('assembles tool input from input_json_delta before the final message', () => {
    const toolStart = seqOf(events, (e) => innerType(e) === 'content_block_start' && JSON.stringify(e).includes('"type":"tool_use"'));
    const partial = upTo(toolStart + 1);
    expect(tools(partial)[0]).toMatchObject({ status: 'streaming', inputComplete: false });
    const tool = tools(partial)[0];
    if (!tool) throw new Error('no tool');
    expect(liveText(partial, tool)).toContain('touch made_by_tool.txt');
    const stopped = upTo(toolStart + 2);
    expect(tools(stopped)[0]?.input).toEqual({ command: 'touch made_by_tool.txt && ls', description: 'Create a file and list' });
  });
});

describe('resilience', () => {
  const once = reduceAll(initialChatState, events);

  it('ignores duplicated events', () => {
    const twice = reduceAll(initialChatState, events.flatMap((m) => [m, m]));
    expect(twice).toEqual(once);
    // A whole replay after the end is a no-op too.
    expect(reduceAll(once, events)).toBe(once);
  });

  it('gives the same state when the stream is split across a reconnect', () => {
    for (const cut of [1, 5, 17, 18, 19, 50, events.length - 1]) {
      const before = reduceAll(initialChatState, events.slice(0, cut));
      // The reconnect: a hello with the approvals the server knows, then the
      // server resends from `from=lastSeq` (here with an overlap, as a safety net).
      const reconnect: ChatInput[] = [
        helloMessage(cut >= 18 ? [approvalMessage(cut >= 19 ? 'allowed' : 'pending', cut >= 19 ? { decided_by: 'client' } : {}) as Approval] : []),
        ...events.slice(Math.max(0, cut - 3)),
      ];
      const after = reduceAll(before, reconnect);
      expect(transcript(after)).toEqual(transcript(once));
      expect(after.lastSeq).toBe(once.lastSeq);
      expect(after.approvals[REQUEST_ID]?.state).toBe('allowed');
    }
  });

  it('handles the final assistant message after message_stop as well as before', () => {
    const swapped: EventMessage[] = [];
    const list = [...events];
    for (let i = 0; i < list.length; i++) {
      const cur = list[i];
      const next = list[i + 1];
      if (cur && next && typeOf(cur.event) === 'assistant' && innerType(next.event) === 'message_stop') {
        swapped.push(next, cur);
        i++;
      } else if (cur) {
        swapped.push(cur);
      }
    }
    const renumbered = swapped.map((m, i) => ({ ...m, seq: i + 1 }));
    expect(transcript(reduceAll(initialChatState, renumbered))).toEqual(transcript(once));
  });

  it('shows the final message alone when nothing was streamed', () => {
    const noStream = events.filter((m) => typeOf(m.event) !== 'stream_event');
    const s = reduceAll(initialChatState, noStream);
    expect(transcript(s)).toEqual(transcript(once));
  });

  it('lets unknown events and odd shapes pass without harm', () => {
    const odd: JsonValue[] = [
      { type: 'x-qwen-thought', subject: 's' },
      [1, 2],
      'text',
      null,
      { type: 'stream_event', event: { type: 'ping' } },
      { type: 'user' },
      { type: 'assistant', message: { content: 42 } },
      { type: 'control_request', request_id: 'r', request: { subtype: 'interrupt' } },
      { type: 'control_response', response: { subtype: 'success', request_id: 'nobody' } },
      { type: 'stream_event', event: { type: 'content_block_delta', index: 7, delta: { type: 'signature_delta', signature: 'x' } } },
    ];
    const mixed: ChatInput[] = [];
    let seq = 0;
    for (const m of events) {
      mixed.push({ ...m, seq: ++seq });
      // Not all of them are objects, as the type promises: the reducer must cope with a lying server too.
      if (m.seq % 10 === 0) for (const e of odd) mixed.push({ type: 'event', seq: ++seq, event: e as SidecarEvent });
    }
    const s = reduceAll(initialChatState, mixed);
    expect(transcript(s)).toEqual(transcript(once));
    expect(s.unknownEvents).toBeGreaterThan(0);
  });
});


describe('local submits', () => {
  it('shows a pending prompt until it is written or echoed', () => {
    const s1 = reduce(initialChatState, { type: 'local_submit', id: 'c1', text: 'hi' });
    expect(s1.pending).toEqual([{ id: 'c1', text: 'hi', state: 'sending' }]);
    const queued = reduce(s1, { type: 'ack', id: 'c1', queued: true });
    expect(queued.pending[0]?.state).toBe('queued');
    const echoed = reduce(queued, at(1));
    expect(echoed.pending).toEqual([]);
    expect(reduce(s1, { type: 'ack', id: 'c1', queued: false }).pending).toEqual([]);
    const failed = reduce(s1, { type: 'error', code: 'no_sidecar', message: 'no sidecar', id: 'c1' });
    expect(failed.pending).toEqual([]);
    expect(transcript(failed)).toEqual(['notice: no sidecar']);
  });

  it('marks answers in flight as unconfirmed on a new connection', () => {
    const req = seqOf(events, (e) => typeOf(e) === 'control_request');
    let s = reduce(upTo(req), { type: 'local_submit', id: 'c1', text: 'hello again' });
    s = reduce(s, { type: 'local_approve', requestId: REQUEST_ID });
    s = reduce(s, helloMessage());
    expect(s.pending[0]?.state).toBe('unconfirmed');
    expect(s.approvals[REQUEST_ID]).toMatchObject({ state: 'pending', sending: false });
    // If it did land, its echo settles it.
    s = reduce(s, { type: 'event', seq: s.lastSeq + 1, event: { type: 'user', message: { role: 'user', content: 'hello again' } } });
    expect(s.pending).toEqual([]);
  });

  it('goes to exited on exit', () => {
    const s = reduce(reduceAll(initialChatState, events), { type: 'exit', code: 0, success: true });
    expect(chatStatus(s)).toBe('exited');
    expect(s.exit).toEqual({ code: 0, success: true });
  });

  it('advances past skipped lines, and a warning ahead of the events drops none of them', () => {
    const s = reduce(upTo(2), { type: 'warning', id: 1, code: 'bad_line', message: 'not JSON', seq: 3 });
    expect(s.lastSeq).toBe(3);
    // The same warning again (replayed to a new connection): nothing changes.
    expect(reduce(s, { type: 'warning', id: 1, code: 'bad_line', message: 'not JSON', seq: 3 })).toBe(s);
    // Another warning about a line already applied: no notice.
    expect(reduce(s, { type: 'warning', id: 2, code: 'bad_line', message: 'not JSON', seq: 3 }).items).toEqual(s.items);
    // A fresh socket tells the warnings it keeps before it replays the events: the skipped
    // line's seq must not make the events before it look seen.
    const first = reduce(initialChatState, { type: 'warning', id: 1, code: 'bad_line', message: 'not JSON', seq: 3 });
    const all = reduceAll(first, events.filter((m) => m.seq <= 2));
    expect(all.lastSeq).toBe(2);
    expect(transcript(upTo(2)).length).toBeGreaterThan(0);
    expect(transcript(all)).toEqual([...transcript(first), ...transcript(upTo(2))]);
  });

  it('shows each numbered warning once, across reconnects', () => {
    const w = { type: 'warning', id: 1, code: 'ready_timeout', message: 'the screen did not show "ready"' } as const;
    const once = reduceAll(initialChatState, [w, helloMessage(), w]);
    expect(transcript(once)).toEqual(['notice: Warning: the screen did not show "ready"']);
    // A new one with the same words counts up the same notice.
    expect(reduce(once, { ...w, id: 2 }).items).toEqual([{ kind: 'notice', id: 'n:1', level: 'warning', text: 'Warning: the screen did not show "ready"', count: 2 }]);
  });
});

describe('notices', () => {
  it('collapses repeats of the same error', () => {
    const err: ChatInput = { type: 'error', code: 'session_ended', message: 'the program has exited' };
    const s = reduceAll(initialChatState, [err, err, err]);
    expect(s.items).toEqual([{ kind: 'notice', id: 'n:1', level: 'error', text: 'the program has exited', count: 3 }]);
  });
});


describe('slash commands sent from the chat', () => {
  it('join the transcript as the user’s command when the server takes them', () => {
    let s = reduce(initialChatState, { type: 'local_submit', id: 's1', text: '/help ' });
    expect(s.pending).toHaveLength(1);
    s = reduce(s, { type: 'ack', id: 's1', queued: false });
    expect(s.pending).toEqual([]);
    expect(s.items).toEqual([{ kind: 'user', id: 'cmd:s1', text: '/help', command: 'sent' }]);
    // An agent that does echo it does not make it appear twice.
    s = reduce(s, { type: 'event', seq: 1, event: { type: 'user', message: { role: 'user', content: '/help' } } });
    expect(transcript(s)).toEqual(['user: /help']);
  });

  it('say so when the server holds them for the agent', () => {
    const s = reduceAll(initialChatState, [{ type: 'local_submit', id: 's2', text: '/clear' }, { type: 'ack', id: 's2', queued: true }]);
    expect(s.items).toEqual([{ kind: 'user', id: 'cmd:s2', text: '/clear', command: 'queued' }]);
  });

  it('leave ordinary prompts to the agent’s echo', () => {
    const s = reduceAll(initialChatState, [{ type: 'local_submit', id: 's3', text: 'hello' }, { type: 'ack', id: 's3', queued: false }]);
    expect(s.items).toEqual([]);
    expect(isSlashCommand('  /x')).toBe(true);
    expect(isSlashCommand('a /x')).toBe(false);
  });
});

describe('exit', () => {
  it('comes from the hello when attaching to an ended session', () => {
    const s = reduce(initialChatState, { ...helloMessage(), status: 'exited', exit: { signal: 'SIGTERM', success: false } } as ServerMessage);
    expect(s.exit).toEqual({ signal: 'SIGTERM', success: false });
    expect(chatStatus(s)).toBe('exited');
  });
});

describe('REST failures stay with the action that failed', () => {
  it('marks the prompt as not sent, keeping its text, without a notice in the conversation', () => {
    const s = reduceAll(initialChatState, [
      { type: 'local_submit', id: 's1', text: 'important prompt' },
      { type: 'local_failure', target: 'submit', id: 's1', message: 'the program has exited' },
    ]);
    expect(s.pending).toEqual([{ id: 's1', text: 'important prompt', state: 'failed', error: 'the program has exited' }]);
    expect(s.items).toEqual([]);
  });

  it('puts an approval’s failure on its card, and clears it with the next answer or the server’s word', () => {
    const req = seqOf(events, (e) => typeOf(e) === 'control_request');
    const sending = reduce(upTo(req), { type: 'local_approve', requestId: REQUEST_ID });
    const failed = reduce(sending, { type: 'local_failure', target: 'approve', id: REQUEST_ID, message: 'network error' });
    expect(failed.approvals[REQUEST_ID]).toMatchObject({ state: 'pending', sending: false, error: 'network error' });
    expect(failed.items.some((i) => i.kind === 'notice')).toBe(false);
    expect(reduce(failed, { type: 'local_approve', requestId: REQUEST_ID }).approvals[REQUEST_ID]?.error).toBeUndefined();
    expect(reduce(failed, approvalMessage('allowed', { decided_by: 'terminal' })).approvals[REQUEST_ID]?.error).toBeUndefined();
  });
});
