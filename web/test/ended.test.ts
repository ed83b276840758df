// @vitest-environment jsdom
// A program that ended with work under way (it exited, or duet was killed
// and the session recovered): a tool call without its result did not
// finish.
import { describe, expect, it } from 'vitest';
import type { ServerMessage, SidecarEvent } from '../src/generated/protocol';
import { historySegments } from '../src/chat/history';
import { initialChatState, reduce, reduceAll, type ChatInput, type ChatState, type ToolItem } from '../src/chat/state';
import { hello } from './fixture';

const toolUse = (id: string): SidecarEvent => ({ type: 'assistant', message: { id: `m-${id}`, role: 'assistant', content: [{ type: 'tool_use', id, name: 'run_shell_command', input: { command: 'sleep 600' } }] } });
const toolResult = (id: string): SidecarEvent => ({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] } });
const event = (seq: number, e: SidecarEvent): ChatInput => ({ type: 'event', seq, event: e });
const killed: ServerMessage = { type: 'exit', success: false, signal: 'SIGKILL' };

function statuses(s: ChatState): Record<string, string> {
  return Object.fromEntries(s.items.filter((i): i is ToolItem => i.kind === 'tool').map((t) => [t.toolUseId, t.status]));
}

describe('a tool call when the program ends', () => {
  it('stops running at a live exit; one that got its result stays done', () => {
    const running = reduceAll(initialChatState, [hello(), event(1, toolUse('t1')), event(2, toolResult('t1')), event(3, toolUse('t2'))]);
    expect(statuses(running)).toEqual({ t1: 'done', t2: 'running' });
    expect(statuses(reduce(running, killed))).toEqual({ t1: 'done', t2: 'interrupted' });
  });

  it('never looks running in a session that had ended before the tab attached (a recovered one)', () => {
    const s = reduceAll(initialChatState, [hello({ status: 'exited', exit: { success: false, signal: 'SIGKILL' } }), event(1, toolUse('t1'))]);
    expect(statuses(s)).toEqual({ t1: 'interrupted' });
    // A reconnect that learns of the exit from the hello, not from an `exit`.
    const live = reduceAll(initialChatState, [hello(), event(1, toolUse('t1'))]);
    expect(statuses(reduce(live, hello({ status: 'exited', exit: { success: false } })))).toEqual({ t1: 'interrupted' });
  });

  it('did not finish in an earlier session shown above a resumed one', () => {
    const line = (seq: number, e: SidecarEvent) => JSON.stringify({ session: 'a', seq, event: e });
    const [seg] = historySegments([line(1, toolUse('t1')), line(2, toolUse('t2')), line(3, toolResult('t2'))].join('\n'));
    expect(seg && statuses(seg.state)).toEqual({ t1: 'interrupted', t2: 'done' });
  });
});
