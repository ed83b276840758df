// Streamed assistant messages: `stream_event`s build the message block by
// block, and the final `assistant` message replaces what was streamed for it.
import { isObject, parseJson } from './json';
import type { AssistantItem, ChatItem, ChatState, ThinkingItem } from './model';
import { blockId, commitAll, commitLive, endStream, findTool, itemById, itemMessageId, newTool, replaceItem, upsertTool, withStatus } from './items';
import { linkApprovalToTool } from './approvals';
import type { KnownBlock, KnownStreamEvent } from '../generated/protocol';
import { knownBlock, knownDelta, messageIdOf } from './sidecar';

/**
 * Applies one streaming event. A delta costs O(1) whatever the transcript's
 * length: its block's item is found through `stream.blocks` and its text goes
 * to `stream.live`, not into a new transcript array; the item takes the text
 * once per block (`commitLive`), when the block or the message stops.
 */
export function applyStream(state: ChatState, ev: KnownStreamEvent): ChatState {
  switch (ev.type) {
    case 'message_start': {
      const next = state.stream ? endStream(state) : state;
      return {
        ...next,
        awaitingReply: true,
        stream: { messageId: messageIdOf(ev.message) ?? `seq${state.lastSeq}`, sawDelta: false, finalised: false, blocks: {}, live: {} },
      };
    }
    case 'content_block_start': {
      const s = state.stream;
      const block = knownBlock(ev.content_block);
      if (!s || s.finalised || !block) return state;
      return startBlock(state, s.messageId, ev.index, block);
    }
    case 'content_block_delta': {
      const s = state.stream;
      if (!s || s.finalised) return state;
      let next = state;
      const d = knownDelta(ev.delta);
      let piece: string | undefined;
      let id: string | undefined;
      if (d?.type === 'text_delta' || d?.type === 'thinking_delta') {
        const text = d.type === 'text_delta';
        id = blockId(text ? 'assistant' : 'thinking', s.messageId, ev.index);
        // A delta without its content_block_start opens the block.
        if (s.blocks[ev.index] !== id) next = startBlock(next, s.messageId, ev.index, text ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' });
        piece = d.type === 'text_delta' ? d.text : d.thinking;
      } else if (d?.type === 'input_json_delta') {
        id = s.blocks[ev.index];
        piece = id?.startsWith('tool:') ? d.partial_json : undefined;
      }
      const cur = next.stream ?? s;
      const live = id !== undefined && piece !== undefined ? { ...cur.live, [id]: (cur.live[id] ?? '') + piece } : cur.live;
      return { ...next, awaitingReply: false, stream: { ...cur, sawDelta: true, live } };
    }
    case 'content_block_stop': {
      const s = state.stream;
      if (!s || s.finalised) return state;
      const id = s.blocks[ev.index];
      if (id === undefined) return state;
      const next = commitLive(state, id);
      const item = itemById(next, id);
      if (item?.kind === 'tool' && !item.inputComplete) {
        const parsed = item.partialJson.trim() === '' ? undefined : parseJson(item.partialJson);
        return upsertTool(next, { ...item, input: parsed ?? item.input, inputComplete: true });
      }
      if (item?.kind === 'assistant' && item.streaming) return replaceItem(next, { ...item, streaming: false });
      return next;
    }
    case 'message_stop': {
      if (!state.stream) return state;
      const mid = state.stream.messageId;
      // Tools named in this message are complete even if the final message never comes.
      let next: ChatState = { ...endStream(state), awaitingReply: false };
      for (const item of next.items) {
        if (item.kind === 'tool' && item.messageId === mid && !item.inputComplete) {
          next = upsertTool(next, { ...item, inputComplete: true });
        }
      }
      return next;
    }
    case 'message_delta':
      return state;
  }
}

/** Opens block `index` of the streamed message: its item, and its place in `stream.blocks`. */
export function startBlock(state: ChatState, messageId: string, index: number, block: KnownBlock): ChatState {
  let next = state;
  let id: string | undefined;
  switch (block.type) {
    case 'text':
    case 'thinking': {
      const kind = block.type === 'text' ? 'assistant' : 'thinking';
      id = blockId(kind, messageId, index);
      if (itemById(state, id) === undefined) {
        const item: AssistantItem | ThinkingItem = { kind, id, messageId, index, text: block.type === 'text' ? block.text : block.thinking, streaming: true };
        next = { ...state, items: [...state.items, item] };
      }
      break;
    }
    case 'tool_use': {
      const existing = findTool(state, block.id);
      const base = existing ?? newTool(block.id, block.name, messageId);
      const hasInput = isObject(block.input) && Object.keys(block.input).length > 0;
      next = upsertTool(state, { ...base, name: block.name, messageId, index, input: hasInput ? block.input : base.input });
      id = base.id;
      break;
    }
    case 'tool_result':
      return state;
  }
  const s = next.stream;
  return s?.messageId === messageId ? { ...next, stream: { ...s, blocks: { ...s.blocks, [index]: id } } } : next;
}

/**
 * The final assistant message replaces whatever was streamed for it, in place.
 * It may arrive before `message_stop` (Qwen Code) or after it; either way the
 * items are found by message id, not by stream position.
 */
export function applyAssistant(state: ChatState, finalId: string | undefined, blocks: KnownBlock[]): ChatState {
  // What was streamed joins its items first (the final message then replaces them).
  state = commitAll(state);
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
        if (b.thinking !== '') fresh.push({ kind: 'thinking', id: blockId('thinking', messageId, index), messageId, index, text: b.thinking, streaming: false });
        break;
      case 'tool_use': {
        const base = findTool(next, b.id) ?? newTool(b.id, b.name, messageId);
        fresh.push(withStatus(next, { ...base, name: b.name, messageId, index, input: b.input, partialJson: '', inputComplete: true }));
        break;
      }
      case 'tool_result':
        break;
    }
  });

  // The message's items go; its fresh ones take the place of the first (or go at the end).
  // One pass, one new array: a long log gets a final message per turn.
  const items: ChatItem[] = [];
  next.items.forEach((item, i) => {
    if (i === firstAt) items.push(...fresh);
    if (!belongs(item)) items.push(item);
  });
  if (firstAt < 0) items.push(...fresh);
  next = { ...next, items };
  if (s?.messageId === messageId) next = { ...next, stream: { ...s, finalised: true } };
  // Approvals that arrived before their tool existed attach now.
  for (const t of fresh) if (t.kind === 'tool') next = linkApprovalToTool(next, t.toolUseId);
  return { ...next, awaitingReply: false };
}
