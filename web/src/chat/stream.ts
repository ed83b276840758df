// Streamed assistant messages: `stream_event`s build the message block by
// block, and the final `assistant` message replaces what was streamed for it.
import { isObject, parseJson } from './json';
import type { AssistantItem, ChatItem, ChatState, ThinkingItem, ToolItem } from './model';
import { blockId, findTool, itemMessageId, newTool, replaceItem, upsertTool, withStatus } from './items';
import { linkApprovalToTool } from './approvals';
import type { Block, StreamEvent } from './sidecar';

export function applyStream(state: ChatState, ev: StreamEvent): ChatState {
  switch (ev.type) {
    case 'message_start':
      return {
        ...state,
        awaitingReply: true,
        stream: { messageId: ev.messageId ?? `seq${state.lastSeq}`, sawDelta: false, finalised: false },
      };
    case 'content_block_start': {
      const s = state.stream;
      if (!s || s.finalised) return state;
      return startBlock(state, s.messageId, ev.index, ev.block);
    }
    case 'content_block_delta': {
      const s = state.stream;
      if (!s || s.finalised) return state;
      let next = state;
      const d = ev.delta;
      if (d.type === 'text' || d.type === 'thinking') {
        const kind = d.type === 'text' ? 'assistant' : 'thinking';
        const id = blockId(kind, s.messageId, ev.index);
        const existing = next.items.find((i) => i.id === id);
        if (existing && (existing.kind === 'assistant' || existing.kind === 'thinking')) {
          next = replaceItem(next, { ...existing, text: existing.text + d.text });
        } else {
          next = startBlock(next, s.messageId, ev.index, d.type === 'text' ? { type: 'text', text: d.text } : { type: 'thinking', text: d.text });
        }
      } else if (d.type === 'input_json') {
        const tool = next.items.find((i): i is ToolItem => i.kind === 'tool' && i.messageId === s.messageId && i.index === ev.index);
        if (tool && !tool.inputComplete) {
          next = upsertTool(next, { ...tool, partialJson: tool.partialJson + d.partialJson });
        }
      }
      return { ...next, awaitingReply: false, stream: { ...s, sawDelta: true } };
    }
    case 'content_block_stop': {
      const s = state.stream;
      if (!s || s.finalised) return state;
      const tool = state.items.find((i): i is ToolItem => i.kind === 'tool' && i.messageId === s.messageId && i.index === ev.index);
      if (tool && !tool.inputComplete) {
        const parsed = tool.partialJson.trim() === '' ? undefined : parseJson(tool.partialJson);
        return upsertTool(state, { ...tool, input: parsed ?? tool.input, inputComplete: true });
      }
      const id = blockId('assistant', s.messageId, ev.index);
      const text = state.items.find((i) => i.id === id);
      if (text?.kind === 'assistant' && text.streaming) return replaceItem(state, { ...text, streaming: false });
      return state;
    }
    case 'message_stop': {
      if (!state.stream) return state;
      // Tools named in this message are complete even if the final message never comes.
      let next: ChatState = { ...state, stream: null, awaitingReply: false };
      const mid = state.stream.messageId;
      for (const item of state.items) {
        if (item.kind === 'tool' && item.messageId === mid && !item.inputComplete) {
          next = upsertTool(next, { ...item, inputComplete: true });
        }
      }
      return next;
    }
    case 'other':
      return state;
  }
}

export function startBlock(state: ChatState, messageId: string, index: number, block: Block): ChatState {
  switch (block.type) {
    case 'text':
    case 'thinking': {
      const kind = block.type === 'text' ? 'assistant' : 'thinking';
      const id = blockId(kind, messageId, index);
      if (state.items.some((i) => i.id === id)) return state;
      const item: AssistantItem | ThinkingItem = { kind, id, messageId, index, text: block.text, streaming: true };
      return { ...state, items: [...state.items, item] };
    }
    case 'tool_use': {
      const existing = findTool(state, block.id);
      const base = existing ?? newTool(block.id, block.name, messageId);
      const hasInput = isObject(block.input) && Object.keys(block.input).length > 0;
      return upsertTool(state, { ...base, name: block.name, messageId, index, input: hasInput ? block.input : base.input });
    }
    case 'tool_result':
    case 'other':
      return state;
  }
}

/**
 * The final assistant message replaces whatever was streamed for it, in place.
 * It may arrive before `message_stop` (Qwen Code) or after it; either way the
 * items are found by message id, not by stream position.
 */
export function applyAssistant(state: ChatState, finalId: string | undefined, blocks: Block[]): ChatState {
  const s = state.stream;
  let messageId = finalId ?? s?.messageId ?? `seq${state.lastSeq}`;
  if (s && !s.finalised && !state.items.some((i) => itemMessageId(i) === messageId)) {
    // An id mismatch between message_start and the final message: trust the open stream.
    messageId = s.messageId;
  }
  const toolIds = new Set(blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])));
  const belongs = (i: ChatItem): boolean => itemMessageId(i) === messageId || (i.kind === 'tool' && toolIds.has(i.toolUseId));
  const firstAt = state.items.findIndex(belongs);

  let next = state;
  const fresh: ChatItem[] = [];
  blocks.forEach((b, index) => {
    switch (b.type) {
      case 'text':
        if (b.text !== '') fresh.push({ kind: 'assistant', id: blockId('assistant', messageId, index), messageId, index, text: b.text, streaming: false });
        break;
      case 'thinking':
        if (b.text !== '') fresh.push({ kind: 'thinking', id: blockId('thinking', messageId, index), messageId, index, text: b.text, streaming: false });
        break;
      case 'tool_use': {
        const base = findTool(next, b.id) ?? newTool(b.id, b.name, messageId);
        fresh.push(withStatus(next, { ...base, name: b.name, messageId, index, input: b.input, partialJson: '', inputComplete: true }));
        break;
      }
      case 'tool_result':
      case 'other':
        break;
    }
  });

  const kept = next.items.filter((i) => !belongs(i));
  const insertAt = firstAt < 0 ? kept.length : next.items.slice(0, firstAt).filter((i) => !belongs(i)).length;
  next = { ...next, items: [...kept.slice(0, insertAt), ...fresh, ...kept.slice(insertAt)] };
  if (s?.messageId === messageId) next = { ...next, stream: { ...s, finalised: true } };
  // Approvals that arrived before their tool existed attach now.
  for (const t of fresh) if (t.kind === 'tool') next = linkApprovalToTool(next, t.toolUseId);
  return { ...next, awaitingReply: false };
}
