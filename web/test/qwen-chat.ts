// The recorded Qwen Code stream and the helpers the chat-state tests read it with.
import type { Approval, JsonValue, ServerMessage } from '../src/generated/protocol';
import { initialChatState, reduceAll, type ChatItem, type ChatState, type ToolItem } from '../src/chat/state';
import { isObject } from '../src/chat/json';
import { hello, loadQwenEvents, seqOf, type EventMessage } from './fixture';

export const events = loadQwenEvents();
export const REQUEST_ID = '158de962-dd6d-4415-ab26-dc02bd3c33b7';

export function at(i: number): EventMessage {
  const m = events[i];
  if (!m) throw new Error(`no event #${i}`);
  return m;
}
export function typeOf(e: JsonValue): string | undefined {
  return isObject(e) && typeof e.type === 'string' ? e.type : undefined;
}
export function innerType(e: JsonValue): string | undefined {
  return isObject(e) && isObject(e.event) && typeof e.event.type === 'string' ? e.event.type : undefined;
}
export function upTo(seq: number): ChatState {
  return reduceAll(initialChatState, events.filter((m) => m.seq <= seq));
}
/** The transcript without ids: what a person sees. */
export function transcript(s: ChatState): string[] {
  return s.items.map((i: ChatItem) => {
    switch (i.kind) {
      case 'user':
        return `user: ${i.text}`;
      case 'assistant':
        return `assistant: ${i.text}`;
      case 'thinking':
        return `thinking: ${i.text}`;
      case 'tool':
        return `tool ${i.name} [${i.status}]`;
      case 'notice':
        return `notice: ${i.text}`;
    }
  });
}
export function tools(s: ChatState): ToolItem[] {
  return s.items.filter((i): i is ToolItem => i.kind === 'tool');
}
export function helloMessage(approvals: Approval[] = []): ServerMessage {
  return hello({ last_seq: events.length, approvals });
}
export function approvalMessage(state: Approval['state'], extra: Partial<Approval> = {}): ServerMessage {
  return {
    type: 'approval',
    request_id: REQUEST_ID,
    tool_name: 'run_shell_command',
    tool_use_id: 'call_mock_7',
    input: { command: 'touch made_by_tool.txt && ls' },
    state,
    options: [],
    confirmed: state !== 'pending',
    seq: seqOf(events, (e) => typeOf(e) === 'control_request'),
    ...extra,
  };
}

/** For a value the test knows is there: `x ?? fail()`. */
export function fail(): never {
  throw new Error('missing');
}
