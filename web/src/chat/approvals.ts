// Approvals in the chat: merging what events say with the server's word
// (which always wins), and tying each approval to its tool card.
import type { Approval, ApprovalOption } from '../generated/protocol';
import type { ApprovalView, ChatState, ToolItem } from './model';
import { findTool, newTool, upsertTool } from './items';


/**
 * Merges an approval. A decided approval never goes back to pending (an old
 * `control_request` replayed after the server said "allowed" must not revive
 * the buttons). Event-derived decisions fill in only what the server has not
 * said; the server's `approval` message always wins.
 */
export function applyApproval(state: ChatState, a: ApprovalView, source: 'event' | 'server'): ChatState {
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
      decidedByName: server ? a.decidedByName : (a.decidedByName ?? old.decidedByName),
      reason: server ? a.reason : (a.reason ?? old.reason),
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

export function applyServerApproval(state: ChatState, a: Approval): ChatState {
  let next = applyApproval(
    state,
    {
      requestId: a.request_id,
      toolUseId: a.tool_use_id,
      toolName: a.tool_name,
      input: a.input,
      state: a.state,
      decidedBy: a.decided_by,
      decidedByName: a.decided_by_name,
      reason: a.reason,
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

export function setApproval(state: ChatState, a: ApprovalView): ChatState {
  return { ...state, approvals: { ...state.approvals, [a.requestId]: a } };
}

export function linkApprovalToTool(state: ChatState, toolUseId: string): ChatState {
  const tool = findTool(state, toolUseId);
  if (!tool) return state;
  const approval = Object.values(state.approvals).find((a) => a.toolUseId === toolUseId);
  if (!approval) return state;
  return upsertTool(state, { ...tool, requestId: approval.requestId });
}
/** The approval attached to a tool card, if any. */
export function approvalOf(state: ChatState, tool: ToolItem): ApprovalView | undefined {
  return tool.requestId !== undefined ? state.approvals[tool.requestId] : undefined;
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
