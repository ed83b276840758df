// Approvals in the chat state: decided elsewhere (the terminal, another tab, the server), their options and confirmation; fed with the real Qwen Code stream.
import { describe, expect, it } from 'vitest';
import type { Approval } from '../src/generated/protocol';
import { chatStatus, chosenOption, initialChatState, isSentUnconfirmed, reduce, reduceAll } from '../src/chat/state';
import { seqOf } from './fixture';
import { events, REQUEST_ID, at, typeOf, upTo, tools, helloMessage, approvalMessage, fail } from './qwen-chat';

describe('approvals decided elsewhere', () => {
  const req = seqOf(events, (e) => typeOf(e) === 'control_request');
  const pending = upTo(req);

  it("offers the agent's dialog's choices once the server reads them from its screen", () => {
    const once = { id: 'allow', label: 'Yes, allow once', kind: 'allow_once' as const };
    const no = { id: 'deny', label: 'No, suggest changes', kind: 'reject_once' as const };
    const two = [once, no];
    const four = [once, { id: '2', label: "Always allow run 'touch *' commands in this project", kind: 'allow_always' as const },
      { id: '3', label: "Always allow run 'touch *' commands for this user", kind: 'allow_always' as const }, no];
    const asked = reduce(pending, approvalMessage('pending', { options: two }));
    expect(asked.approvals[REQUEST_ID]?.options).toEqual(two);
    const reoffered = reduce(asked, approvalMessage('pending', { options: four }));
    expect(reoffered.approvals[REQUEST_ID]?.options.map((o) => o.id)).toEqual(['allow', '2', '3', 'deny']);
    expect(tools(reoffered)[0]?.status).toBe('awaiting_approval');
    // Decided with a key choice: the card names it.
    const chosen = reduce(reoffered, approvalMessage('allowed', { options: four, chosen: '2', decided_by: 'client' }));
    expect(chosen.approvals[REQUEST_ID]?.chosen).toBe('2');
  });

  it('flips the card when the terminal answers', () => {
    const s = reduce(pending, approvalMessage('denied', { decided_by: 'terminal' }));
    expect(s.approvals[REQUEST_ID]).toMatchObject({ state: 'denied', decidedBy: 'terminal' });
    expect(tools(s)[0]?.status).toBe('denied');
    expect(chatStatus(s)).not.toBe('awaiting_approval');
  });

  it('never goes back to pending', () => {
    const allowed = reduce(pending, approvalMessage('allowed', { decided_by: 'client' }));
    const again = reduce(allowed, approvalMessage('pending'));
    expect(again.approvals[REQUEST_ID]?.state).toBe('allowed');
  });

  it('lets the server overrule what the events said', () => {
    const viaEvent = upTo(req + 1);
    expect(viaEvent.approvals[REQUEST_ID]?.state).toBe('allowed');
    const s = reduce(viaEvent, approvalMessage('denied', { decided_by: 'terminal' }));
    expect(s.approvals[REQUEST_ID]?.state).toBe('denied');
  });

  it('keeps an approval that arrives before its event, and links it when the event comes', () => {
    const early = reduce(upTo(req - 1), approvalMessage('pending'));
    // The server's approval is ahead of the events: no card of its own.
    expect(tools(early)).toHaveLength(1);
    const s = reduceAll(early, events.filter((m) => m.seq >= req && m.seq <= req));
    expect(tools(s)[0]).toMatchObject({ requestId: REQUEST_ID, status: 'awaiting_approval' });
  });

  it('shows a spinner while this tab’s answer is on its way, and stops it on an error', () => {
    const sending = reduce(pending, { type: 'local_approve', requestId: REQUEST_ID });
    expect(sending.approvals[REQUEST_ID]?.sending).toBe(true);
    const failed = reduce(sending, { type: 'error', code: 'already_resolved', message: 'already resolved', id: 'a1' });
    expect(failed.approvals[REQUEST_ID]?.sending).toBe(false);
    // Answered first elsewhere is no failure of this tab's: said calmly.
    expect(failed.items.at(-1)).toMatchObject({ kind: 'notice', level: 'info', text: expect.stringContaining('already answered elsewhere') as unknown });
    const broken = reduce(sending, { type: 'error', code: 'internal', message: 'could not write', id: 'a1' });
    expect(broken.items.at(-1)).toMatchObject({ kind: 'notice', level: 'error', text: 'could not write' });
  });

  it('creates a card for an approval without a streamed tool', () => {
    const s = reduceAll(initialChatState, [
      { type: 'event', seq: 1, event: { type: 'control_request', request_id: 'r9', request: { subtype: 'can_use_tool', tool_name: 'edit', input: { file_path: 'a.txt', old_string: 'a', new_string: 'b' } } } },
    ]);
    expect(tools(s)[0]).toMatchObject({ name: 'edit', requestId: 'r9', status: 'awaiting_approval' });
    const done = reduce(s, { type: 'event', seq: 2, event: { type: 'control_response', response: { subtype: 'success', request_id: 'r9', response: { allowed: false } } } });
    expect(tools(done)[0]?.status).toBe('denied');
  });
});

describe('approval options and confirmation', () => {
  const req = seqOf(events, (e) => typeOf(e) === 'control_request');
  const options: Approval['options'] = [
    { id: 'proceed_once', label: 'Yes, allow once', kind: 'allow_once' },
    { id: 'proceed_always', label: 'Yes, allow always', kind: 'allow_always' },
    { id: 'cancel', label: 'No (esc)', kind: 'reject_once' },
  ];
  const pending = reduce(upTo(req), approvalMessage('pending', { options, confirmed: false }));

  it('keeps the agent’s options, in its order, also when the event replays after the server spoke', () => {
    expect(pending.approvals[REQUEST_ID]?.options.map((o) => o.id)).toEqual(['proceed_once', 'proceed_always', 'cancel']);
    // A reconnect replays the control_request (no options in the event): they stay.
    const replayed = reduce({ ...pending, lastSeq: req - 1 }, at(req - 1));
    expect(replayed.approvals[REQUEST_ID]?.options).toHaveLength(3);
  });

  it('goes sending → sent, waiting for the agent → confirmed', () => {
    const sending = reduce(pending, { type: 'local_approve', requestId: REQUEST_ID, option: 'proceed_always' });
    expect(sending.approvals[REQUEST_ID]).toMatchObject({ sending: true, sentOption: 'proceed_always', state: 'pending' });
    expect(chosenOption(sending.approvals[REQUEST_ID] ?? fail())?.label).toBe('Yes, allow always');
    expect(chatStatus(sending)).toBe('approval_sent');

    const sent = reduce(sending, approvalMessage('allowed', { options, decided_by: 'client', chosen: 'proceed_always', confirmed: false }));
    const a = sent.approvals[REQUEST_ID] ?? fail();
    expect(a).toMatchObject({ state: 'allowed', decidedBy: 'client', chosen: 'proceed_always', confirmed: false, sending: false });
    expect(isSentUnconfirmed(a)).toBe(true);
    expect(tools(sent)[0]?.status).toBe('sent');
    expect(chatStatus(sent)).toBe('approval_sent');

    const confirmed = reduce(sent, approvalMessage('allowed', { options, decided_by: 'client', chosen: 'proceed_always', confirmed: true }));
    expect(isSentUnconfirmed(confirmed.approvals[REQUEST_ID] ?? fail())).toBe(false);
    expect(tools(confirmed)[0]?.status).toBe('running');
    expect(chatStatus(confirmed)).toBe('running_tool');
  });

  it('takes the agent’s own answer (control_response event) as the confirmation', () => {
    const sent = reduce(pending, approvalMessage('allowed', { options, decided_by: 'client', chosen: 'proceed_once', confirmed: false }));
    const viaEvent = reduce(sent, at(req)); // seq req + 1: the recorded control_response, allowed
    expect(viaEvent.approvals[REQUEST_ID]).toMatchObject({ state: 'allowed', decidedBy: 'client', chosen: 'proceed_once', confirmed: true });
  });

  it('lets the server correct a client decision the terminal beat', () => {
    const sent = reduce(pending, approvalMessage('allowed', { options, decided_by: 'client', chosen: 'proceed_once', confirmed: false }));
    const corrected = reduce(sent, approvalMessage('denied', { options, decided_by: 'terminal', confirmed: true }));
    expect(corrected.approvals[REQUEST_ID]).toMatchObject({ state: 'denied', decidedBy: 'terminal', chosen: undefined, confirmed: true });
    expect(tools(corrected)[0]?.status).toBe('denied');
  });

  it('shows a decision made in another tab (the broadcast) without any local action', () => {
    const other = reduce(pending, approvalMessage('denied', { options, decided_by: 'client', chosen: 'cancel', confirmed: false }));
    const a = other.approvals[REQUEST_ID] ?? fail();
    expect(a.sending).toBe(false);
    expect(chosenOption(a)?.label).toBe('No (esc)');
    expect(tools(other)[0]?.status).toBe('sent');
  });

  it('forgets the option in flight when the connection is replaced or the answer fails', () => {
    const sending = reduce(pending, { type: 'local_approve', requestId: REQUEST_ID, option: 'cancel' });
    expect(reduce(sending, helloMessage()).approvals[REQUEST_ID]).toMatchObject({ sending: false, sentOption: undefined });
    expect(reduce(sending, { type: 'error', code: 'already_resolved', message: 'x', id: 'a1' }).approvals[REQUEST_ID]).toMatchObject({ sending: false, sentOption: undefined });
  });

  it('fills options and confirmation for an approval known only from events', () => {
    const s = reduce(initialChatState, { type: 'event', seq: 1, event: { type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'x', input: {} } } });
    expect(s.approvals.r1).toMatchObject({ options: [], chosen: undefined, confirmed: false });
  });
});
