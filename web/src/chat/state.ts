// The chat view's state and its pure reducer: (state, input) → state, where the
// input is a server message or a local action (a submit or an approval click).
// No DOM, no I/O, no clocks: the same inputs always give the same state, which
// is what lets a reconnect resume from the last seq and the unit tests replay
// a recorded stream.
//
// State is immutable: a changed transcript item is a new object, so the view
// re-renders exactly the items whose identity changed.
import type { ExitInfo, HeldPrompt } from '../generated/protocol';
import { withCurrentModel } from './modes';
import type { KnownBlock, KnownEvent } from '../generated/protocol';
import { isObject } from './json';
import { blocksOf, canUseTool, knownEvent, knownStreamEvent } from './sidecar';
import type { ChatInput, ChatState, NoticeItem, PendingSubmit, UserItem } from './model';
import { endStream, findTool, isSentUnconfirmed, newTool, replaceItem, upsertTool, withToolStatuses } from './items';
import { applyApproval, applyServerApproval, setApproval } from './approvals';
import { applyAssistant, applyStream } from './stream';

export * from './model';
export { toolStatus, endedStatus, isSentUnconfirmed, liveText } from './items';
export { approvalOf, chosenOption, optionAllows } from './approvals';

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
      next = { ...next, modes: input.modes ?? null };
      for (const a of input.approvals) next = applyServerApproval(next, a);
      // Tools shown before the exit was known (a reconnect) did not finish.
      if ((state.exit === null) !== (next.exit === null)) next = withToolStatuses(next);
      return applyServerPrompts(next, input.unsent, input.held);
    }
    case 'event':
      // Seq dedupe: a replayed event (reconnect overlap, duplicate delivery) is a no-op.
      if (input.seq <= state.lastSeq) return state;
      return applyEvent({ ...state, lastSeq: input.seq }, knownEvent(input.event));
    case 'warning': {
      // The server numbers warnings and replays the ones it keeps to every
      // new connection: a reconnect must not show them again.
      if (input.id <= state.lastWarningId) return state;
      let next: ChatState = { ...state, lastWarningId: input.id };
      if (input.seq !== undefined) {
        // A skipped sidecar line still consumes its seq, so `from=` stays right; but only in
        // order: a fresh socket tells the warnings it keeps before it replays the events, and a
        // later seq taken here made every event before it look seen (dropped).
        if (input.seq <= state.lastSeq) return next;
        if (input.seq === state.lastSeq + 1) next = { ...next, lastSeq: input.seq };
        return addNotice(next, 'warning', `Skipped an event: ${input.message}`);
      }
      return addNotice(next, 'warning', `Warning: ${input.message}`);
    }
    case 'approval':
      return applyServerApproval(state, input);
    case 'exit':
      return withToolStatuses({ ...endStream(state), exit: exitInfo(input), awaitingReply: false });
    case 'unsent':
      return applyServerPrompts(state, input.prompts, input.held);
    case 'modes':
      return { ...state, modes: input.current === undefined ? { available: input.available } : { current: input.current, available: input.available } };
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

function applyEvent(state: ChatState, ev: KnownEvent | undefined): ChatState {
  if (!ev) return { ...state, unknownEvents: state.unknownEvents + 1 };
  switch (ev.type) {
    case 'system':
      if (ev.subtype === 'session_start' && isObject(ev.data)) return { ...state, agent: ev.data };
      if (ev.subtype === 'acp_current_model_update') {
        const raw = ev as unknown as { update?: { currentModelId?: unknown } };
        const model = raw.update?.currentModelId;
        if (typeof model === 'string') return { ...state, agent: withCurrentModel(state.agent, model) };
      }
      return state;
    case 'user':
      return applyUser(state, ev.uuid, blocksOf(ev.message.content));
    case 'assistant':
      // Qwen Code sets both, equal to the streamed message_start id; prefer the message's own.
      return applyAssistant(state, ev.message.id ?? ev.uuid, blocksOf(ev.message.content));
    case 'stream_event': {
      const inner = knownStreamEvent(ev.event);
      return inner ? applyStream(state, inner) : state;
    }
    case 'result': {
      const next: ChatState = { ...endStream(state), awaitingReply: false };
      return ev.is_error === true ? addNotice(next, 'error', ev.result ?? 'The turn ended with an error.') : next;
    }
    case 'control_request': {
      const tool = canUseTool(ev.request);
      if (!tool) return state;
      return applyApproval(state, {
        requestId: ev.request_id,
        toolUseId: tool.tool_use_id ?? undefined,
        toolName: tool.tool_name,
        input: tool.input,
        state: 'pending',
        decidedBy: undefined,
        options: [],
        chosen: undefined,
        confirmed: false,
        sending: false,
        sentOption: undefined,
        error: undefined,
      }, 'event');
    }
    case 'control_response': {
      const r = ev.response;
      const a = state.approvals[r.request_id];
      if (!a) return state;
      const answer = r.subtype === 'success' && isObject(r.response) ? r.response.allowed : undefined;
      if (typeof answer !== 'boolean') {
        // An error answer (e.g. an unknown or already-resolved request): the
        // approval keeps its state; the server's `approval` message is the authority.
        return a.sending ? setApproval(state, { ...a, sending: false, sentOption: undefined }) : state;
      }
      // The agent's own answer: whoever decided, the outcome is confirmed.
      return applyApproval(state, { ...a, state: answer ? 'allowed' : 'denied', confirmed: true }, 'event');
    }
  }
}

function applyUser(state: ChatState, uuid: string | undefined, blocks: KnownBlock[]): ChatState {
  let next = state;
  const text = blocks
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('')
    .trim();
  let sawResult = false;
  for (const b of blocks) {
    if (b.type !== 'tool_result') continue;
    sawResult = true;
    const existing = findTool(next, b.tool_use_id);
    const base = existing ?? newTool(b.tool_use_id, 'tool', undefined);
    next = upsertTool(next, { ...base, inputComplete: true, result: { isError: b.is_error ?? false, content: b.content } });
  }
  if (text !== '') {
    const id = `u:${uuid ?? String(next.lastSeq)}`;
    // An agent that does echo a slash command: the chat already shows it (from the ack).
    const lastUser = [...next.items].reverse().find((i): i is UserItem => i.kind === 'user');
    const echoOfCommand = lastUser?.command !== undefined && lastUser.text === text;
    if (!echoOfCommand && !next.items.some((i) => i.id === id)) {
      next = { ...next, items: [...next.items, { kind: 'user', id, text }] };
    }
    // The echo of a prompt this tab sent: it is in the transcript now. (Not
    // an unsent one: the server keeps that until a client discards it.)
    const p = next.pending.findIndex((s) => s.state !== 'unsent' && s.text.trim() === text);
    if (p >= 0) next = { ...next, pending: next.pending.filter((_, i) => i !== p) };
  }
  if (text !== '' || sawResult) {
    // A new prompt ends any half-streamed message; a tool result goes back to the model.
    next = { ...(text !== '' ? endStream(next) : next), awaitingReply: true };
  }
  return next;
}

function exitInfo(e: ExitInfo): ExitInfo {
  const info: ExitInfo = { success: e.success };
  if (e.code !== undefined) info.code = e.code;
  if (e.signal !== undefined) info.signal = e.signal;
  if (e.server_stopped === true) info.server_stopped = true;
  if (e.ended_by !== undefined) info.ended_by = e.ended_by;
  return info;
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

/**
 * The server's lists of unsent and held prompts replace the ones shown from
 * the last lists, so every tab shows what waits, whoever sent it. A prompt
 * this tab sent and still shows as its own (on its way, queued) is one of
 * them now: the server's entry takes its place, so it is not shown twice.
 * A held prompt that left the list and is not unsent was handed to the
 * agent (a held prompt leaves no other way): it shows as on its way until
 * its echo joins the transcript, as the tab's own prompt did.
 */
function applyServerPrompts(state: ChatState, unsent: readonly HeldPrompt[] = [], held: readonly HeldPrompt[] = []): ChatState {
  const fromServer = (p: PendingSubmit): boolean => p.state === 'unsent' || p.held !== undefined;
  if (unsent.length === 0 && held.length === 0 && !state.pending.some(fromServer)) return state;
  let local = state.pending.filter((p) => !fromServer(p));
  const take = (text: string, states: readonly PendingSubmit['state'][]): void => {
    const mine = local.findIndex((p) => states.includes(p.state) && p.text.trim() === text.trim());
    if (mine >= 0) local = local.filter((_, i) => i !== mine);
  };
  const unsentEntries = unsent.map((u): PendingSubmit => {
    take(u.text, ['queued', 'unconfirmed']);
    return { id: `unsent:${String(u.n)}`, text: u.text, state: 'unsent', n: u.n };
  });
  const heldEntries = held.map((u): PendingSubmit => {
    take(u.text, ['sending', 'queued', 'unconfirmed']);
    return { id: `held:${String(u.n)}`, text: u.text, state: 'queued', held: u.n };
  });
  const shown = new Set([...unsent, ...held].map((u) => u.n));
  const delivered = state.pending
    .filter((p) => p.held !== undefined && !shown.has(p.held))
    .map((p): PendingSubmit => ({ id: p.id, text: p.text, state: 'sending' }));
  return { ...state, pending: [...unsentEntries, ...delivered, ...heldEntries, ...local] };
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
  if (runningTool(state.items)) return 'running_tool';
  return 'idle';
}

/** Whether a tool runs, once per transcript array (the status is asked for every frame). */
const running = new WeakMap<ChatState['items'], boolean>();
function runningTool(items: ChatState['items']): boolean {
  let r = running.get(items);
  if (r === undefined) {
    r = items.some((i) => i.kind === 'tool' && i.status === 'running');
    running.set(items, r);
  }
  return r;
}

/** Whether a prompt is a slash command (handled by the agent's own UI; no `user` event). */
export function isSlashCommand(text: string): boolean {
  return text.trimStart().startsWith('/');
}
