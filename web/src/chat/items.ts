// Transcript item helpers shared by the reducer's parts: ids, lookups, tool
// status, and replacing an item (a new object, so the view redraws it).
import type { ApprovalView, ChatItem, ChatState, ToolItem, ToolStatus } from './model';


export function blockId(kind: 'assistant' | 'thinking', messageId: string, index: number): string {
  return `${kind === 'assistant' ? 'a' : 't'}:${messageId}:${index}`;
}

export function itemMessageId(i: ChatItem): string | undefined {
  return i.kind === 'assistant' || i.kind === 'thinking' || i.kind === 'tool' ? i.messageId : undefined;
}

export function findTool(state: ChatState, toolUseId: string): ToolItem | undefined {
  const id = `tool:${toolUseId}`;
  return state.items.find((i): i is ToolItem => i.id === id && i.kind === 'tool');
}

export function newTool(toolUseId: string, name: string, messageId: string | undefined): ToolItem {
  return {
    kind: 'tool',
    id: `tool:${toolUseId}`,
    toolUseId,
    messageId,
    index: undefined,
    name,
    input: {},
    partialJson: '',
    inputComplete: false,
    requestId: undefined,
    result: undefined,
    status: 'streaming',
  };
}

/**
 * The tool's status from its own progress and its approval, and whether the
 * program has ended (`ended`): then nothing is still under way.
 */
export function toolStatus(tool: ToolItem, approval: ApprovalView | undefined, ended = false): ToolStatus {
  const status = liveStatus(tool, approval);
  return ended ? endedStatus(status) : status;
}

function liveStatus(tool: ToolItem, approval: ApprovalView | undefined): ToolStatus {
  if (approval && isSentUnconfirmed(approval) && !tool.result) return 'sent';
  if (approval?.state === 'denied') return 'denied';
  if (tool.result) return tool.result.isError ? 'error' : 'done';
  if (approval) {
    switch (approval.state) {
      case 'pending':
        return 'awaiting_approval';
      case 'abandoned':
        return 'abandoned';
      case 'allowed':
        return 'running';
    }
  }
  return tool.inputComplete ? 'running' : 'streaming';
}

/**
 * What a status becomes once the program is gone: a call under way did not
 * finish (no result will come), a request nobody answered was abandoned.
 */
export function endedStatus(status: ToolStatus): ToolStatus {
  switch (status) {
    case 'streaming':
    case 'running':
    case 'sent':
      return 'interrupted';
    case 'awaiting_approval':
      return 'abandoned';
    default:
      return status;
  }
}

export function withStatus(state: ChatState, tool: ToolItem): ToolItem {
  const approval = tool.requestId !== undefined ? state.approvals[tool.requestId] : undefined;
  const status = toolStatus(tool, approval, state.exit !== null);
  return status === tool.status ? tool : { ...tool, status };
}

/** Every tool item with its status derived again (the program's exit changes them all). */
export function withToolStatuses(state: ChatState): ChatState {
  const items = state.items.map((i) => (i.kind === 'tool' ? withStatus(state, i) : i));
  return items.some((i, k) => i !== state.items[k]) ? { ...state, items } : state;
}

/** Inserts or replaces a tool item, recomputing its status. */
export function upsertTool(state: ChatState, tool: ToolItem): ChatState {
  const t = withStatus(state, tool);
  if (state.items.some((i) => i.id === t.id)) return replaceItem(state, t);
  return { ...state, items: [...state.items, t] };
}

export function replaceItem(state: ChatState, item: ChatItem): ChatState {
  return { ...state, items: state.items.map((i) => (i.id === item.id ? item : i)) };
}

/** A client decided and the agent has not confirmed it yet ("sent, waiting for the agent"). */
export function isSentUnconfirmed(a: ApprovalView): boolean {
  return a.state !== 'pending' && a.decidedBy === 'client' && !a.confirmed;
}

/** The item with this id (a search: for once-per-block work, never per token). */
export function itemById(state: ChatState, id: string): ChatItem | undefined {
  return state.items.find((i) => i.id === id);
}

/** What an item shows now: its text (a tool: its partial JSON) and what is still streaming into it. */
export function liveText(state: ChatState, item: ChatItem): string {
  const live = state.stream?.live[item.id] ?? '';
  switch (item.kind) {
    case 'assistant':
    case 'thinking':
      return item.text + live;
    case 'tool':
      return item.inputComplete ? item.partialJson : item.partialJson + live;
    default:
      return '';
  }
}

/** Moves the text streamed into block `id` into its item (once per block). */
export function commitLive(state: ChatState, id: string): ChatState {
  const s = state.stream;
  const piece = s?.live[id];
  if (!s || piece === undefined) return state;
  const live = Object.fromEntries(Object.entries(s.live).filter(([k]) => k !== id));
  const next: ChatState = { ...state, stream: { ...s, live } };
  const item = itemById(next, id);
  if (item?.kind === 'assistant' || item?.kind === 'thinking') return replaceItem(next, { ...item, text: item.text + piece });
  if (item?.kind === 'tool' && !item.inputComplete) return upsertTool(next, { ...item, partialJson: item.partialJson + piece });
  return next;
}

/** Moves every open block's streamed text into its item. */
export function commitAll(state: ChatState): ChatState {
  let next = state;
  for (const id of Object.keys(state.stream?.live ?? {})) next = commitLive(next, id);
  return next;
}

/** Ends the streamed message; its open blocks keep what was streamed. */
export function endStream(state: ChatState): ChatState {
  return state.stream ? { ...commitAll(state), stream: null } : state;
}
