// The chat view's state and its pure reducer: (state, input) → state, where the
// input is a server message or a local action (a submit or an approval click).
// No DOM, no I/O, no clocks: the same inputs always give the same state, which
// is what lets a reconnect resume from the last seq and the unit tests replay
// a recorded stream.
//
// State is immutable: a changed transcript item is a new object, so the view
// re-renders exactly the items whose identity changed.
import type { Approval, ApprovalOption, ApprovalState, Decider, ExitInfo, JsonValue, ServerMessage } from '../generated/protocol';
import { isObject, parseJson } from './json';
import { parseSidecarEvent, type Block, type SidecarEvent, type StreamEvent } from './sidecar';

/** How far a tool call has come. */
export type ToolStatus = 'streaming' | 'running' | 'awaiting_approval' | 'sent' | 'done' | 'error' | 'denied' | 'abandoned';

/** A prompt (from the chat or typed into the terminal). */
export interface UserItem {
  readonly kind: 'user';
  readonly id: string;
  readonly text: string;
  /**
   * A slash command this tab sent: the agent acts on it in its terminal and
   * writes no event for it, so the chat shows it from the server's ack.
   * `queued`: held until the agent is ready.
   */
  readonly command?: 'sent' | 'queued';
}

/** One text block of an assistant message; `streaming` until the final message replaced it. */
export interface AssistantItem {
  readonly kind: 'assistant';
  readonly id: string;
  readonly messageId: string;
  readonly index: number;
  readonly text: string;
  readonly streaming: boolean;
}

/** One thinking block of an assistant message. */
export interface ThinkingItem {
  readonly kind: 'thinking';
  readonly id: string;
  readonly messageId: string;
  readonly index: number;
  readonly text: string;
  readonly streaming: boolean;
}

/** A tool call's result, from the `user` message's `tool_result` block. */
export interface ToolResult {
  readonly isError: boolean;
  readonly content: JsonValue | undefined;
}

/** A tool call, its approval and its result. */
export interface ToolItem {
  readonly kind: 'tool';
  readonly id: string;
  readonly toolUseId: string;
  readonly messageId: string | undefined;
  /** The block index in its assistant message, to route streamed input to it. */
  readonly index: number | undefined;
  readonly name: string;
  /** The parsed input; `{}` until the streamed JSON is complete. */
  readonly input: JsonValue;
  /** The raw JSON streamed so far (shown while it is incomplete). */
  readonly partialJson: string;
  readonly inputComplete: boolean;
  readonly requestId: string | undefined;
  readonly result: ToolResult | undefined;
  readonly status: ToolStatus;
}

/** Something the user should know that is not part of the conversation. */
export interface NoticeItem {
  readonly kind: 'notice';
  readonly id: string;
  readonly level: 'info' | 'warning' | 'error';
  readonly text: string;
  /** How many times in a row it happened (repeats collapse into one notice). */
  readonly count: number;
}

/** One entry of the transcript. */
export type ChatItem = UserItem | AssistantItem | ThinkingItem | ToolItem | NoticeItem;

/** An approval as the chat knows it: the server's word when it has spoken. */
export interface ApprovalView {
  readonly requestId: string;
  readonly toolUseId: string | undefined;
  readonly toolName: string;
  readonly input: JsonValue;
  readonly state: ApprovalState;
  readonly decidedBy: Decider | undefined;
  /** The agent's choices, in its order (empty: only yes/no is known). */
  readonly options: readonly ApprovalOption[];
  /** The option id a client chose, once the server says so. */
  readonly chosen: string | undefined;
  /** The agent confirmed the outcome (a client's choice is only "sent" until then). */
  readonly confirmed: boolean;
  /** This tab sent an answer and waits for the server's word on it. */
  readonly sending: boolean;
  /** The option this tab sent (while `sending`). */
  readonly sentOption: string | undefined;
  /** Why this tab's answer could not be delivered (a failed REST call), shown on the card. */
  readonly error: string | undefined;
}

/** A prompt this tab submitted that the program has not echoed yet. */
export interface PendingSubmit {
  readonly id: string;
  readonly text: string;
  /**
   * `sending`: on its way; `queued`: the server holds it until the program is
   * ready; `unconfirmed`: the connection dropped before the server said so;
   * `failed`: it could not be delivered (`error` says why).
   */
  readonly state: 'sending' | 'queued' | 'unconfirmed' | 'failed';
  readonly error?: string;
}

/** The assistant message being streamed. */
export interface StreamState {
  readonly messageId: string;
  /** A delta arrived (the status line says "responding" rather than "thinking"). */
  readonly sawDelta: boolean;
  /** The final `assistant` message arrived; later deltas must not touch its text. */
  readonly finalised: boolean;
}

/** Everything the chat pane shows. */
export interface ChatState {
  /** The highest event seq applied; reconnects resume with `from=lastSeq`. */
  readonly lastSeq: number;
  readonly items: readonly ChatItem[];
  readonly approvals: Readonly<Record<string, ApprovalView>>;
  readonly stream: StreamState | null;
  /** A prompt or a tool result went to the model and nothing came back yet. */
  readonly awaitingReply: boolean;
  readonly exit: ExitInfo | null;
  readonly pending: readonly PendingSubmit[];
  /** The program's handshake (`session_start.data`). */
  readonly agent: JsonValue | null;
  /** Events of a type the chat does not know (kept only as a count). */
  readonly unknownEvents: number;
  /** Bumped for every notice, to give each a unique id. */
  readonly noticeCount: number;
  /** The highest warning id shown (the server replays its warnings on every connection). */
  readonly lastWarningId: number;
}

/** Actions that start in this tab rather than on the server. */
export type LocalAction =
  | { readonly type: 'local_submit'; readonly id: string; readonly text: string }
  | { readonly type: 'local_approve'; readonly requestId: string; readonly option?: string }
  | { readonly type: 'local_notice'; readonly level: NoticeItem['level']; readonly text: string }
  /** A request this tab made over REST failed: the failure belongs to that prompt or that card. */
  | { readonly type: 'local_failure'; readonly target: 'submit' | 'approve'; readonly id: string; readonly message: string }
  /** The user let go of a prompt that was not sent. */
  | { readonly type: 'local_discard'; readonly id: string };

/** What the reducer accepts. */
export type ChatInput = ServerMessage | LocalAction;

/** The state before anything arrived. */
export const initialChatState: ChatState = {
  lastSeq: 0,
  items: [],
  approvals: {},
  stream: null,
  awaitingReply: false,
  exit: null,
  pending: [],
  agent: null,
  unknownEvents: 0,
  noticeCount: 0,
  lastWarningId: 0,
};

/** Applies one input. Returns the same object when nothing changed. */
export function reduce(state: ChatState, input: ChatInput): ChatState {
  switch (input.type) {
    case 'hello': {
      // A new connection: answers in flight on the old one may be lost. Their
      // echo (a `user` event, an `approval`) still settles them if they landed.
      const pending = state.pending.map((p): PendingSubmit => (p.state === 'sending' ? { ...p, state: 'unconfirmed' } : p));
      const approvals = Object.fromEntries(Object.entries(state.approvals).map(([k, a]) => [k, a.sending ? { ...a, sending: false, sentOption: undefined } : a]));
      let next: ChatState = { ...state, pending, approvals, exit: input.exit ?? null };
      if (input.agent !== undefined) next = { ...next, agent: input.agent };
      for (const a of input.approvals) next = applyServerApproval(next, a);
      return next;
    }
    case 'event':
      // Seq dedupe: a replayed event (reconnect overlap, duplicate delivery) is a no-op.
      if (input.seq <= state.lastSeq) return state;
      return applyEvent({ ...state, lastSeq: input.seq }, parseSidecarEvent(input.event));
    case 'warning': {
      // The server numbers warnings and replays the ones it keeps to every
      // new connection: a reconnect must not show them again.
      if (input.id <= state.lastWarningId) return state;
      let next: ChatState = { ...state, lastWarningId: input.id };
      if (input.seq !== undefined) {
        // A skipped sidecar line still consumes its seq, so `from=` stays right.
        if (input.seq <= state.lastSeq) return next;
        next = { ...next, lastSeq: input.seq };
        return addNotice(next, 'warning', `Skipped an event: ${input.message}`);
      }
      return addNotice(next, 'warning', `Warning: ${input.message}`);
    }
    case 'approval':
      return applyServerApproval(state, input);
    case 'exit':
      return { ...state, exit: exitInfo(input), stream: null, awaitingReply: false };
    case 'ack':
      return applyAck(state, input.id, input.queued);
    case 'error':
      return applyError(state, input.id, input.code, input.message);
    case 'resync':
    case 'resize':
    case 'pong':
    case 'clients':
      return state;
    case 'local_submit':
      return { ...state, pending: [...state.pending, { id: input.id, text: input.text, state: 'sending' }] };
    case 'local_approve': {
      const a = state.approvals[input.requestId];
      if (a?.state !== 'pending') return state;
      return { ...state, approvals: { ...state.approvals, [a.requestId]: { ...a, sending: true, sentOption: input.option, error: undefined } } };
    }
    case 'local_notice':
      return addNotice(state, input.level, input.text);
    case 'local_discard':
      return state.pending.some((p) => p.id === input.id) ? { ...state, pending: state.pending.filter((p) => p.id !== input.id) } : state;
    case 'local_failure': {
      if (input.target === 'submit') {
        if (!state.pending.some((p) => p.id === input.id)) return state;
        return { ...state, pending: state.pending.map((p): PendingSubmit => (p.id === input.id ? { ...p, state: 'failed', error: input.message } : p)) };
      }
      const a = state.approvals[input.id];
      if (!a) return state;
      return setApproval(state, { ...a, sending: false, sentOption: undefined, error: a.state === 'pending' ? input.message : undefined });
    }
  }
}

/** Applies a whole list of inputs (tests, replays). */
export function reduceAll(state: ChatState, inputs: Iterable<ChatInput>): ChatState {
  let s = state;
  for (const i of inputs) s = reduce(s, i);
  return s;
}

// ---------------------------------------------------------------------------
// Sidecar events

function applyEvent(state: ChatState, ev: SidecarEvent): ChatState {
  switch (ev.type) {
    case 'system':
      if (ev.subtype === 'session_start' && ev.data) return { ...state, agent: ev.data };
      return state;
    case 'user':
      return applyUser(state, ev.uuid, ev.blocks);
    case 'assistant':
      return applyAssistant(state, ev.messageId, ev.blocks);
    case 'stream_event':
      return applyStream(state, ev.event);
    case 'result': {
      const next: ChatState = { ...state, stream: null, awaitingReply: false };
      return ev.isError ? addNotice(next, 'error', ev.text ?? 'The turn ended with an error.') : next;
    }
    case 'control_request':
      if (!ev.tool) return state;
      return applyApproval(state, {
        requestId: ev.requestId,
        toolUseId: ev.tool.toolUseId,
        toolName: ev.tool.name,
        input: ev.tool.input,
        state: 'pending',
        decidedBy: undefined,
        options: [],
        chosen: undefined,
        confirmed: false,
        sending: false,
        sentOption: undefined,
        error: undefined,
      }, 'event');
    case 'control_response': {
      const a = state.approvals[ev.requestId];
      if (!a) return state;
      if (ev.allowed === undefined) {
        // An error answer (e.g. an unknown or already-resolved request): the
        // approval keeps its state; the server's `approval` message is the authority.
        return a.sending ? setApproval(state, { ...a, sending: false, sentOption: undefined }) : state;
      }
      // The agent's own answer: whoever decided, the outcome is confirmed.
      return applyApproval(state, { ...a, state: ev.allowed ? 'allowed' : 'denied', confirmed: true }, 'event');
    }
    case 'unknown':
      return { ...state, unknownEvents: state.unknownEvents + 1 };
  }
}

function applyUser(state: ChatState, uuid: string | undefined, blocks: Block[]): ChatState {
  let next = state;
  const text = blocks
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('')
    .trim();
  let sawResult = false;
  for (const b of blocks) {
    if (b.type !== 'tool_result') continue;
    sawResult = true;
    const existing = findTool(next, b.toolUseId);
    const base = existing ?? newTool(b.toolUseId, 'tool', undefined);
    next = upsertTool(next, { ...base, inputComplete: true, result: { isError: b.isError, content: b.content } });
  }
  if (text !== '') {
    const id = `u:${uuid ?? String(next.lastSeq)}`;
    // An agent that does echo a slash command: the chat already shows it (from the ack).
    const lastUser = [...next.items].reverse().find((i): i is UserItem => i.kind === 'user');
    const echoOfCommand = lastUser?.command !== undefined && lastUser.text === text;
    if (!echoOfCommand && !next.items.some((i) => i.id === id)) {
      next = { ...next, items: [...next.items, { kind: 'user', id, text }] };
    }
    // The echo of a prompt this tab sent: it is in the transcript now.
    const p = next.pending.findIndex((s) => s.text.trim() === text);
    if (p >= 0) next = { ...next, pending: next.pending.filter((_, i) => i !== p) };
  }
  if (text !== '' || sawResult) {
    // A new prompt ends any half-streamed message; a tool result goes back to the model.
    next = { ...next, awaitingReply: true, stream: text !== '' ? null : next.stream };
  }
  return next;
}

function applyStream(state: ChatState, ev: StreamEvent): ChatState {
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

function startBlock(state: ChatState, messageId: string, index: number, block: Block): ChatState {
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
function applyAssistant(state: ChatState, finalId: string | undefined, blocks: Block[]): ChatState {
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

// ---------------------------------------------------------------------------
// Approvals

/**
 * Merges an approval. A decided approval never goes back to pending (an old
 * `control_request` replayed after the server said "allowed" must not revive
 * the buttons). Event-derived decisions fill in only what the server has not
 * said; the server's `approval` message always wins.
 */
function applyApproval(state: ChatState, a: ApprovalView, source: 'event' | 'server'): ChatState {
  const old = state.approvals[a.requestId];
  let merged: ApprovalView;
  if (!old) {
    merged = a;
  } else if (old.state !== 'pending' && a.state === 'pending') {
    merged = { ...old, toolUseId: old.toolUseId ?? a.toolUseId, options: old.options.length > 0 ? old.options : a.options };
  } else if (source === 'event' && old.state !== 'pending') {
    // The agent's answer agreeing with a decision the server reported as sent confirms it.
    if (a.confirmed && !old.confirmed && a.state === old.state) merged = { ...old, confirmed: true };
    else return state;
  } else {
    const server = source === 'server';
    merged = {
      ...old,
      ...a,
      toolUseId: a.toolUseId ?? old.toolUseId,
      // The server's word on who decided and what was chosen is final; events only fill gaps.
      decidedBy: server ? a.decidedBy : (a.decidedBy ?? old.decidedBy),
      chosen: server ? a.chosen : (a.chosen ?? old.chosen),
      confirmed: server ? a.confirmed : old.confirmed || a.confirmed,
      options: a.options.length > 0 ? a.options : old.options,
      sending: a.state === 'pending' ? old.sending : false,
      sentOption: a.state === 'pending' ? old.sentOption : undefined,
      error: a.state === 'pending' ? old.error : undefined,
    };
  }
  let next = setApproval(state, merged);
  if (merged.toolUseId !== undefined) {
    if (!findTool(next, merged.toolUseId) && source === 'event') {
      // A tool the stream never showed (a program without partial messages): the card starts here.
      next = upsertTool(next, { ...newTool(merged.toolUseId, merged.toolName, undefined), input: merged.input, inputComplete: true });
    }
    next = linkApprovalToTool(next, merged.toolUseId);
  } else if (source === 'event') {
    const id = `req:${merged.requestId}`;
    const base = findTool(next, id) ?? { ...newTool(id, merged.toolName, undefined), input: merged.input, inputComplete: true };
    next = upsertTool(next, { ...base, requestId: merged.requestId });
  } else {
    const t = findTool(next, `req:${merged.requestId}`);
    if (t) next = upsertTool(next, t);
  }
  return next;
}

function applyServerApproval(state: ChatState, a: Approval): ChatState {
  let next = applyApproval(
    state,
    {
      requestId: a.request_id,
      toolUseId: a.tool_use_id,
      toolName: a.tool_name,
      input: a.input,
      state: a.state,
      decidedBy: a.decided_by,
      options: a.options,
      chosen: a.chosen,
      confirmed: a.confirmed,
      sending: false,
      sentOption: undefined,
      error: undefined,
    },
    'server',
  );
  // The server reports an approval whose control_request this client has
  // already applied but whose tool card is missing (e.g. no tool_use_id):
  // create the card now. If the event is still to come, it will create it.
  const toolId = a.tool_use_id ?? `req:${a.request_id}`;
  if (a.seq <= next.lastSeq && !findTool(next, toolId)) {
    next = upsertTool(next, { ...newTool(toolId, a.tool_name, undefined), input: a.input, inputComplete: true, requestId: a.request_id });
  }
  return next;
}

function exitInfo(e: ExitInfo): ExitInfo {
  const info: ExitInfo = { success: e.success };
  if (e.code !== undefined) info.code = e.code;
  if (e.signal !== undefined) info.signal = e.signal;
  return info;
}

function setApproval(state: ChatState, a: ApprovalView): ChatState {
  return { ...state, approvals: { ...state.approvals, [a.requestId]: a } };
}

function linkApprovalToTool(state: ChatState, toolUseId: string): ChatState {
  const tool = findTool(state, toolUseId);
  if (!tool) return state;
  const approval = Object.values(state.approvals).find((a) => a.toolUseId === toolUseId);
  if (!approval) return state;
  return upsertTool(state, { ...tool, requestId: approval.requestId });
}

// ---------------------------------------------------------------------------
// Acks, errors, notices

function applyAck(state: ChatState, id: string, queued: boolean): ChatState {
  const p = state.pending.find((s) => s.id === id);
  if (!p) return state;
  if (isSlashCommand(p.text)) {
    // The agent acts on a slash command in its terminal and writes no event
    // for it: the server's ack is all the chat will hear, so it joins the
    // transcript now, as the user's, pointing at the terminal.
    const item: UserItem = { kind: 'user', id: `cmd:${id}`, text: p.text.trim(), command: queued ? 'queued' : 'sent' };
    return { ...state, pending: state.pending.filter((s) => s.id !== id), items: [...state.items, item] };
  }
  // Written to the program: its `user` event is the real message now. Queued:
  // keep showing it as waiting until the program takes it.
  const pending = queued ? state.pending.map((s): PendingSubmit => (s.id === id ? { ...s, state: 'queued' } : s)) : state.pending.filter((s) => s.id !== id);
  return { ...state, pending };
}

function applyError(state: ChatState, id: string | undefined, code: string, message: string): ChatState {
  let next = state;
  let wasAnswering = false;
  if (id !== undefined) {
    next = { ...next, pending: next.pending.filter((s) => s.id !== id) };
    // An approval click that failed (already resolved elsewhere): stop the spinner.
    for (const a of Object.values(next.approvals)) {
      if (!a.sending) continue;
      wasAnswering = true;
      next = setApproval(next, { ...a, sending: false, sentOption: undefined });
    }
  }
  if (wasAnswering && code === 'already_resolved') {
    // Another tab or the terminal answered first: not a failure, and the card says who.
    return addNotice(next, 'info', 'That approval was already answered elsewhere; its card shows the outcome.');
  }
  return addNotice(next, 'error', message);
}

function addNotice(state: ChatState, level: NoticeItem['level'], text: string): ChatState {
  const last = state.items.at(-1);
  if (last?.kind === 'notice' && last.level === level && last.text === text) {
    // The same complaint again (e.g. every keystroke into an exited program): count it, don't repeat it.
    return replaceItem(state, { ...last, count: last.count + 1 });
  }
  const n = state.noticeCount + 1;
  return { ...state, noticeCount: n, items: [...state.items, { kind: 'notice', id: `n:${n}`, level, text, count: 1 }] };
}

// ---------------------------------------------------------------------------
// Item helpers

function blockId(kind: 'assistant' | 'thinking', messageId: string, index: number): string {
  return `${kind === 'assistant' ? 'a' : 't'}:${messageId}:${index}`;
}

function itemMessageId(i: ChatItem): string | undefined {
  return i.kind === 'assistant' || i.kind === 'thinking' || i.kind === 'tool' ? i.messageId : undefined;
}

function findTool(state: ChatState, toolUseId: string): ToolItem | undefined {
  const id = `tool:${toolUseId}`;
  return state.items.find((i): i is ToolItem => i.id === id && i.kind === 'tool');
}

function newTool(toolUseId: string, name: string, messageId: string | undefined): ToolItem {
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

/** The tool's status from its own progress and its approval. */
export function toolStatus(tool: ToolItem, approval: ApprovalView | undefined): ToolStatus {
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

function withStatus(state: ChatState, tool: ToolItem): ToolItem {
  const approval = tool.requestId !== undefined ? state.approvals[tool.requestId] : undefined;
  const status = toolStatus(tool, approval);
  return status === tool.status ? tool : { ...tool, status };
}

/** Inserts or replaces a tool item, recomputing its status. */
function upsertTool(state: ChatState, tool: ToolItem): ChatState {
  const t = withStatus(state, tool);
  if (state.items.some((i) => i.id === t.id)) return replaceItem(state, t);
  return { ...state, items: [...state.items, t] };
}

function replaceItem(state: ChatState, item: ChatItem): ChatState {
  return { ...state, items: state.items.map((i) => (i.id === item.id ? item : i)) };
}

// ---------------------------------------------------------------------------
// Selectors

/** What the status line says. */
export type ChatStatus = 'idle' | 'thinking' | 'responding' | 'running_tool' | 'awaiting_approval' | 'approval_sent' | 'exited';

/** The status line's state, derived from the chat state. */
export function chatStatus(state: ChatState): ChatStatus {
  if (state.exit) return 'exited';
  const approvals = Object.values(state.approvals);
  if (approvals.some((a) => a.state === 'pending' && !a.sending)) return 'awaiting_approval';
  if (approvals.some((a) => a.sending || isSentUnconfirmed(a))) return 'approval_sent';
  if (state.stream && !state.stream.finalised && state.stream.sawDelta) return 'responding';
  if (state.awaitingReply || (state.stream && !state.stream.finalised)) return 'thinking';
  if (state.items.some((i) => i.kind === 'tool' && i.status === 'running')) return 'running_tool';
  return 'idle';
}

/** The approval attached to a tool card, if any. */
export function approvalOf(state: ChatState, tool: ToolItem): ApprovalView | undefined {
  return tool.requestId !== undefined ? state.approvals[tool.requestId] : undefined;
}

/** A client decided and the agent has not confirmed it yet ("sent, waiting for the agent"). */
export function isSentUnconfirmed(a: ApprovalView): boolean {
  return a.state !== 'pending' && a.decidedBy === 'client' && !a.confirmed;
}

/** The option an approval's card names: the one this tab is sending, or the one chosen. */
export function chosenOption(a: ApprovalView): ApprovalOption | undefined {
  const id = a.sending ? a.sentOption : a.chosen;
  return id === undefined ? undefined : a.options.find((o) => o.id === id);
}

/** Whether an option lets the tool run. */
export function optionAllows(o: ApprovalOption): boolean {
  return o.kind === 'allow_once' || o.kind === 'allow_always';
}

/** Whether a prompt is a slash command (handled by the agent's own UI; no `user` event). */
export function isSlashCommand(text: string): boolean {
  return text.trimStart().startsWith('/');
}
