// @vitest-environment jsdom
// The chat pane's DOM: sanitised markdown, tool cards, approval buttons, keyed updates.
import { describe, expect, it, vi } from 'vitest';
import { renderMarkdown } from '../src/chat/markdown';
import { ChatView, exitSentence, outcomeText } from '../src/chat/view';
import type { Approval, ServerMessage } from '../src/generated/protocol';
import { initialChatState, reduce, reduceAll } from '../src/chat/state';
import { hello, loadQwenEvents } from './fixture';

const events = loadQwenEvents();
/** Index of the control_request event (not the handshake that merely names the type). */
const req = events.findIndex((m) => JSON.stringify(m.event).startsWith('{"type":"control_request"'));
const channel = { kind: 'dual_output', events: true, submit: true, approve: true };
const ctx = { channel, connected: true, resumable: false };

function view() {
  const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn(() => Promise.resolve()) };
  const v = new ChatView(cb);
  document.body.replaceChildren(v.root);
  return { v, cb };
}

describe('renderMarkdown', () => {
  it('renders markdown and highlights code', () => {
    const html = renderMarkdown('# Hi\n\nsome **bold**\n\n```rust\nfn main() {}\n```');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('class="hljs-keyword"');
    expect(html).toContain('data-lang="rust"');
  });
  it('shows raw HTML as text and never lets anything active through', () => {
    const box = document.createElement('div');
    box.innerHTML = renderMarkdown('<script>alert(1)</script><img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) and [site](https://e.x)\n\ninline <b onclick="evil()">tag</b>, run <command>');
    expect(box.querySelector('script, img, b, command')).toBeNull();
    expect(box.textContent).toContain('<script>alert(1)</script>');
    expect(box.textContent).toContain('run <command>');
    for (const el of box.querySelectorAll('*')) {
      for (const attr of el.attributes) expect(attr.name.startsWith('on')).toBe(false);
    }
    const links = [...box.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href') ?? '')).not.toContain('javascript:alert(1)');
    const site = links.find((a) => a.textContent === 'site');
    expect(site?.getAttribute('rel')).toBe('noopener noreferrer');
    expect(site?.getAttribute('target')).toBe('_blank');
  });
});

describe('ChatView', () => {
  it('renders the recorded session: messages, two tool cards, results', () => {
    const { v } = view();
    v.render(reduceAll(initialChatState, events), ctx);
    const kinds = [...v.root.querySelectorAll('.chat-log > [data-kind]')].map((e) => e.getAttribute('data-kind'));
    expect(kinds).toEqual(['user', 'assistant', 'user', 'tool', 'assistant', 'user', 'tool', 'assistant']);
    const tools = v.root.querySelectorAll('[data-kind="tool"]');
    expect([...tools].map((t) => t.getAttribute('data-tool-status'))).toEqual(['done', 'done']);
    expect(tools[0]?.querySelector('.tool-input')?.textContent).toBe('$ touch made_by_tool.txt && ls');
    expect(tools[0]?.querySelector('.approval-done')?.textContent).toBe('Allowed.');
    expect(tools[1]?.querySelector('.approval-done')).toBeNull();
    // The second ran without asking (Qwen's read-only `ls`): the card says so; the approved one does not.
    expect(tools[1]?.querySelector('.tool-auto')?.textContent).toBe('Auto-approved by the agent’s mode');
    expect(tools[0]?.querySelector('.tool-auto')).toBeNull();
    expect(tools[0]?.querySelector('.tool-result pre')?.textContent).toBe('made_by_tool.txt');
    expect(v.root.querySelector('[role="status"]')?.textContent).toContain('Idle');
  });

  it('shows Allow / Deny while pending and reports clicks', () => {
    const { v, cb } = view();
    v.render(reduceAll(initialChatState, events.slice(0, req + 1)), ctx);
    expect(v.root.querySelector('[role="status"]')?.textContent).toContain('Waiting for your approval');
    const allow = v.root.querySelector<HTMLButtonElement>('button[data-action="allow"]');
    expect(allow).not.toBeNull();
    allow?.click();
    expect(cb.onApprove).toHaveBeenCalledWith('158de962-dd6d-4415-ab26-dc02bd3c33b7', { allowed: true });
  });

  it('flips the card when the approval is decided elsewhere', () => {
    const { v } = view();
    const pending = reduceAll(initialChatState, events.slice(0, req + 1));
    v.render(pending, ctx);
    const decided = reduce(pending, { type: 'approval', request_id: '158de962-dd6d-4415-ab26-dc02bd3c33b7', tool_name: 'run_shell_command', tool_use_id: 'call_mock_7', input: {}, state: 'denied', decided_by: 'terminal', options: [], confirmed: true, seq: req + 1 });
    v.render(decided, ctx);
    expect(v.root.querySelector('button[data-action="allow"]')).toBeNull();
    expect(v.root.querySelector('[data-approval-state="denied"]')?.textContent).toBe('Denied in the terminal.');
  });

  it('re-renders only the items that changed', () => {
    const { v } = view();
    const firstDelta = events.findIndex((m) => JSON.stringify(m.event).includes('text_delta'));
    const s1 = reduceAll(initialChatState, events.slice(0, firstDelta + 1));
    v.render(s1, ctx);
    const user = v.root.querySelector('[data-kind="user"]');
    const next = events[firstDelta + 1];
    if (!next) throw new Error('fixture too short');
    const s2 = reduce(s1, next);
    v.render(s2, ctx);
    expect(v.root.querySelector('[data-kind="user"]')).toBe(user);
    expect(v.root.querySelector('[data-kind="assistant"]')?.textContent.trim()).toBe('Hello from');
  });

  it('sends on Enter and keeps Shift+Enter for new lines', () => {
    const { v, cb } = view();
    v.render(initialChatState, ctx);
    const input = v.root.querySelector('textarea');
    if (!input) throw new Error('no composer');
    input.value = 'hello';
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', shiftKey: true, bubbles: true }));
    expect(cb.onSubmit).not.toHaveBeenCalled();
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    expect(cb.onSubmit).toHaveBeenCalledWith('hello');
    expect(input.value).toBe('');
  });

  it('shows a file edit as a diff', () => {
    const { v } = view();
    const s = reduce(initialChatState, { type: 'event', seq: 1, event: { type: 'control_request', request_id: 'r1', request: { subtype: 'can_use_tool', tool_name: 'edit', tool_use_id: 't1', input: { file_path: 'notes.txt', old_string: 'one\ntwo\n', new_string: 'one\n2\n' } } } });
    v.render(s, ctx);
    expect(v.root.querySelector('.diff figcaption code')?.textContent).toBe('notes.txt');
    expect([...v.root.querySelectorAll('.diff-line')].map((l) => l.className.replace('diff-line ', ''))).toEqual(['diff-same', 'diff-del', 'diff-add']);
    expect(v.root.querySelector('del.diff-del')?.textContent).toContain('two');
  });
});

describe('approval cards with the agent’s options', () => {
  const RID = '158de962-dd6d-4415-ab26-dc02bd3c33b7';
  const options = [
    { id: 'proceed_once', label: 'Yes, allow once', kind: 'allow_once' },
    { id: 'proceed_always', label: 'Yes, allow always', kind: 'allow_always' },
    { id: 'cancel', label: 'No, suggest changes', kind: 'reject_once' },
  ] as const;
  const approval = (extra: Partial<Approval>): ServerMessage => ({ type: 'approval', request_id: RID, tool_name: 'run_shell_command', tool_use_id: 'call_mock_7', input: {}, state: 'pending', options: [...options], confirmed: false, seq: req + 1, ...extra });
  const pending = reduce(reduceAll(initialChatState, events.slice(0, req + 1)), approval({}));

  it('offers exactly the agent’s options, in its order and wording, styled by kind', () => {
    const { v, cb } = view();
    v.render(pending, ctx);
    const buttons = [...v.root.querySelectorAll<HTMLButtonElement>('.approval-buttons button')];
    expect(buttons.map((b) => b.textContent)).toEqual(['1Yes, allow once', '2Yes, allow always', '3No, suggest changes']);
    expect(buttons.map((b) => b.classList.contains('btn-allow'))).toEqual([true, true, false]);
    expect(buttons[2]?.classList.contains('btn-deny')).toBe(true);
    buttons[1]?.click();
    expect(cb.onApprove).toHaveBeenCalledWith(RID, { option: 'proceed_always' });
  });

  it('answers from the keyboard when the card has the focus: Enter, Escape, digits', () => {
    const { v, cb } = view();
    v.render(pending, ctx);
    const group = v.root.querySelector<HTMLElement>('.approval');
    if (!group) throw new Error('no approval');
    const key = (k: string, target: HTMLElement = group): void => { target.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true })); };
    key('Enter');
    expect(cb.onApprove).toHaveBeenLastCalledWith(RID, { option: 'proceed_once' });
    key('Escape');
    expect(cb.onApprove).toHaveBeenLastCalledWith(RID, { option: 'cancel' });
    key('Backspace');
    expect(cb.onApprove).toHaveBeenLastCalledWith(RID, { option: 'cancel' });
    key('2');
    expect(cb.onApprove).toHaveBeenLastCalledWith(RID, { option: 'proceed_always' });
    key('7');
    key('x');
    expect(cb.onApprove).toHaveBeenCalledTimes(4);
    // Enter on a focused button is that button's (the browser clicks it), not "first allow".
    const third = v.root.querySelectorAll<HTMLButtonElement>('.approval-buttons button')[2];
    if (!third) throw new Error('no third button');
    key('Enter', third);
    expect(cb.onApprove).toHaveBeenCalledTimes(4);
  });

  it('says "sent, waiting for the agent" with the chosen label, then the outcome and who decided', () => {
    const { v } = view();
    const sent = reduce(pending, approval({ state: 'allowed', decided_by: 'client', chosen: 'proceed_always', confirmed: false }));
    v.render(sent, ctx);
    expect(v.root.querySelector('[data-approval-state="sent"]')?.textContent).toBe('Sent — waiting for the agent… (you chose “Yes, allow always”)');
    expect(v.root.querySelector('.approval-buttons')).toBeNull();
    expect(v.root.querySelector('[data-kind="tool"]')?.getAttribute('data-tool-status')).toBe('sent');
    v.render(reduce(sent, approval({ state: 'allowed', decided_by: 'client', chosen: 'proceed_always', confirmed: true })), ctx);
    expect(v.root.querySelector('[data-approval-state="allowed"]')?.textContent).toBe('Allowed in the browser (“Yes, allow always”).');
  });

  it('words every outcome', () => {
    const base = { requestId: 'r', toolUseId: undefined, toolName: 't', input: {}, options: [...options], confirmed: true, sending: false, sentOption: undefined, error: undefined };
    expect(outcomeText({ ...base, state: 'denied', decidedBy: 'terminal', chosen: undefined }, undefined)).toBe('Denied in the terminal.');
    expect(outcomeText({ ...base, state: 'denied', decidedBy: 'client', chosen: 'cancel' }, options[2])).toBe('Denied in the browser (“No, suggest changes”).');
    expect(outcomeText({ ...base, state: 'allowed', decidedBy: 'client', chosen: 'allow' }, { id: 'allow', label: 'Allow', kind: 'allow_once' })).toBe('Allowed in the browser.');
    expect(outcomeText({ ...base, state: 'allowed', decidedBy: 'client', decidedByName: 'ci', chosen: 'allow' }, { id: 'allow', label: 'Allow', kind: 'allow_once' })).toBe('Allowed by ci in the browser.');
    expect(outcomeText({ ...base, state: 'abandoned', decidedBy: undefined, chosen: undefined }, undefined)).toMatch(/^Abandoned/);
    // From a notification's button; by a policy, with what the agent was told.
    const allow = { id: 'allow', label: 'Allow', kind: 'allow_once' } as const;
    expect(outcomeText({ ...base, state: 'allowed', decidedBy: 'notification', decidedByName: 'owner', chosen: 'allow' }, allow)).toBe('Allowed from a notification.');
    expect(outcomeText({ ...base, state: 'denied', decidedBy: 'notification', decidedByName: 'apr', chosen: 'deny' }, undefined)).toBe('Denied by apr from a notification.');
    expect(outcomeText({ ...base, state: 'allowed', decidedBy: 'policy', decidedByName: 'read-only git', chosen: 'allow' }, allow)).toBe('Allowed by policy “read-only git”.');
    expect(outcomeText({ ...base, state: 'denied', decidedBy: 'policy', decidedByName: 'outside', reason: 'Stay inside.', chosen: 'deny' }, undefined)).toBe('Denied by policy “outside”: Stay inside.');
  });

  it('falls back to Allow / Deny when the agent named no options', () => {
    const { v, cb } = view();
    // Known from the events alone: the control_request names no options.
    v.render(reduceAll(initialChatState, events.slice(0, req + 1)), ctx);
    const buttons = [...v.root.querySelectorAll<HTMLButtonElement>('.approval-buttons button')];
    expect(buttons.map((b) => b.textContent)).toEqual(['1Allow', '2Deny']);
    buttons[1]?.click();
    expect(cb.onApprove).toHaveBeenCalledWith(RID, { allowed: false });
  });

  it('keeps the keyboard on the card when a decision from elsewhere replaces the buttons', () => {
    const { v } = view();
    v.render(pending, ctx);
    v.root.querySelector<HTMLButtonElement>('.approval-buttons button')?.focus();
    v.render(reduce(pending, approval({ state: 'denied', decided_by: 'terminal', confirmed: true })), ctx);
    expect(v.root.querySelector('[data-kind="tool"]')?.contains(document.activeElement)).toBe(true);
  });

  it('disables the buttons and says where to answer when the channel cannot approve', () => {
    const { v } = view();
    v.render(pending, { ...ctx, channel: { ...channel, approve: false } });
    expect([...v.root.querySelectorAll<HTMLButtonElement>('.approval-buttons button')].every((b) => b.disabled)).toBe(true);
    expect(v.root.querySelector('.approval-q')?.textContent).toContain('Answer in the terminal');
  });
});

describe('ChatView and the session', () => {
  it('explains a composer that cannot send', () => {
    const { v } = view();
    v.render(initialChatState, { ...ctx, channel: { kind: 'claude_hooks', events: true, submit: false, approve: true } });
    const input = v.root.querySelector('textarea');
    expect(input?.disabled).toBe(true);
    const note = v.root.querySelector<HTMLElement>('.composer-note');
    expect(note?.hidden).toBe(false);
    expect(note?.textContent).toContain('cannot take prompts from the chat');
    v.render(initialChatState, ctx);
    expect(input?.disabled).toBe(false);
    expect(v.root.querySelector<HTMLElement>('.composer-note')?.hidden).toBe(true);
  });

  it('shows the exit in the chat, and Resume when the session can be resumed', async () => {
    const { v, cb } = view();
    const ended = reduce(initialChatState, { type: 'exit', code: 3, success: false });
    v.render(ended, ctx);
    expect(v.root.querySelector('[data-kind="exit"]')?.textContent).toBe('The program exited with code 3.');
    expect(v.root.querySelector<HTMLElement>('.chat-status .resume-control')?.hidden).toBe(true);
    v.render(ended, { ...ctx, resumable: true });
    const resume = v.root.querySelector<HTMLButtonElement>('.chat-status button.resume');
    expect(resume?.closest<HTMLElement>('.resume-control')?.hidden).toBe(false);
    cb.onResume.mockRejectedValueOnce(new Error('the agent cannot resume this conversation'));
    resume?.click();
    await vi.waitFor(() => { expect(v.root.querySelector('.chat-status .resume-error')?.textContent).toBe('Could not resume: the agent cannot resume this conversation'); });
    expect(exitSentence({ signal: 'SIGTERM', success: false })).toBe('The program was ended by SIGTERM');
    expect(exitSentence({ code: 143, success: false })).toBe('The program exited with code 143 (it was ended by SIGTERM)');
    expect(exitSentence({ code: 130, success: false })).toBe('The program exited with code 130 (it was ended by SIGINT)');
    expect(exitSentence({ code: 1, success: false })).toBe('The program exited with code 1');
  });

  it('says the server stopped when its shutdown ended the program, not the SIGTERM it sent', () => {
    const { v } = view();
    // Live (the `exit` message) and recovered after a restart (the hello's exit) alike.
    const ended = reduce(initialChatState, { type: 'exit', code: 143, success: false, server_stopped: true });
    v.render(ended, ctx);
    expect(v.root.querySelector('[data-kind="exit"]')?.textContent).toBe('The program ended when the server stopped.');
    expect(v.root.querySelector('.chat-status')?.textContent).toContain('Ended (server stopped)');
    expect(exitSentence({ signal: 'SIGTERM', success: false, server_stopped: true })).toBe('The program ended when the server stopped');
  });

  it('shows a slash command as the user’s, pointing at the terminal', () => {
    const { v, cb } = view();
    v.render(reduceAll(initialChatState, [{ type: 'local_submit', id: 's1', text: '/help' }, { type: 'ack', id: 's1', queued: false }]), ctx);
    const item = v.root.querySelector('[data-kind="user"][data-command]');
    expect(item?.querySelector('.bubble')?.textContent).toBe('/help');
    expect(item?.textContent).toContain('its output is in the terminal');
    item?.querySelector<HTMLButtonElement>('button.show-terminal')?.click();
    expect(cb.onShowTerminal).toHaveBeenCalled();
  });
});

describe('a prompt that could not be sent', () => {
  it('says why, and offers to send it again or let it go', () => {
    const { v, cb } = view();
    v.render(reduceAll(initialChatState, [{ type: 'local_submit', id: 's1', text: 'hi' }, { type: 'local_failure', target: 'submit', id: 's1', message: 'network error' }]), ctx);
    const item = v.root.querySelector('[data-pending-state="failed"]');
    expect(item?.querySelector('.pending-note')?.textContent).toBe('not sent: network error Send again Dismiss');
    item?.querySelector<HTMLButtonElement>('button.linkish')?.click();
    expect(cb.onDiscard).toHaveBeenCalledWith('s1');
    expect(cb.onSubmit).toHaveBeenCalledWith('hi');
  });
});

describe('a prompt held by a spent budget', () => {
  it('says the budget holds it, and goes back to the usual note once raised', () => {
    const { v } = view();
    const state = reduceAll(initialChatState, [{ type: 'local_submit', id: 's1', text: 'next' }, { type: 'ack', id: 's1', queued: true }]);
    const spent = { limits: { turns: 1 }, exhausted: 'the budget of 1 turn is spent' };
    v.render(state, { ...ctx, budget: spent });
    const note = (): string | null | undefined => v.root.querySelector('[data-pending-state="queued"] .pending-note')?.textContent;
    expect(note()).toBe('held: the budget of 1 turn is spent; it goes when an owner raises the budget (on the board)');
    expect(v.root.querySelector('.status-usage')?.textContent).toBe('Budget spent: the budget of 1 turn is spent');
    v.render(state, { ...ctx, budget: { limits: { turns: 5 } } });
    expect(note()).toBe('queued until the agent is ready');
  });
});

describe('agent modes', () => {
  it('offers the modes the server tells, follows its news, and asks the server to switch', async () => {
    const chosen: string[] = [];
    const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn((m: string) => { chosen.push(m); return Promise.resolve(); }), onSetModel: vi.fn((m: string) => { chosen.push(`model:${m}`); return Promise.resolve(); }) };
    const view = new ChatView(cb);
    document.body.append(view.root);
    const ctx = { channel: undefined, connected: true, resumable: false, role: 'owner' as const };
    const available = [{ id: 'default', name: 'Default' }, { id: 'plan', name: 'Plan' }];
    let state = reduce(initialChatState, { type: 'modes', current: 'default', available });
    view.render(state, ctx);
    const select = view.root.querySelector<HTMLSelectElement>('.mode-select');
    expect(select?.closest('label')?.hidden).toBe(false);
    expect([...(select?.options ?? [])].map((o) => o.textContent)).toEqual(['Default', 'Plan']);
    expect(select?.value).toBe('default');
    state = reduce(state, { type: 'modes', current: 'plan', available });
    view.render(state, ctx);
    expect(select?.value).toBe('plan');
    if (select) {
      select.value = 'default';
      select.dispatchEvent(new Event('change'));
    }
    await Promise.resolve();
    expect(chosen).toEqual(['default']);
    // A viewer sees no picker.
    view.render(state, { ...ctx, role: 'viewer' });
    expect(select?.closest('label')?.hidden).toBe(true);
    view.root.remove();
  });

  it('offers the models of the handshake and follows the agent’s news of a switch', async () => {
    const chosen: string[] = [];
    const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn((m: string) => { chosen.push(m); return Promise.resolve(); }) };
    const view = new ChatView(cb);
    const ctx = { channel: undefined, connected: true, resumable: false, role: 'driver' as const };
    let state = reduce(initialChatState, { type: 'event', seq: 1, event: { type: 'system', subtype: 'session_start', data: { models: { currentModelId: 'small', availableModels: [{ modelId: 'small', name: 'Small' }, { modelId: 'large', name: 'Large' }] } } } as never });
    view.render(state, ctx);
    const select = view.root.querySelector<HTMLSelectElement>('select[aria-label="Agent model"]');
    expect(select?.closest('label')?.hidden).toBe(false);
    expect([...(select?.options ?? [])].map((o) => o.textContent)).toEqual(['Small', 'Large']);
    state = reduce(state, { type: 'event', seq: 2, event: { type: 'system', subtype: 'acp_current_model_update', update: { currentModelId: 'large' } } as never });
    view.render(state, ctx);
    expect(select?.value).toBe('large');
    if (select) {
      select.value = 'small';
      select.dispatchEvent(new Event('change'));
    }
    await Promise.resolve();
    expect(chosen).toEqual(['small']);
  });

  it('shows the modes of the hello, whatever the events say, and none after a hello without', () => {
    const { v } = view();
    const modes = { current: 'default', available: [{ id: 'default', name: 'Ask permissions' }, { id: 'yolo', name: 'YOLO mode' }] };
    let state = reduce(initialChatState, hello({ modes }));
    state = reduce(state, { type: 'event', seq: 1, event: { type: 'system', subtype: 'session_start', data: { session_id: 'b' } } as never });
    v.render(state, { ...ctx, role: 'owner' });
    const select = v.root.querySelector<HTMLSelectElement>('.mode-select');
    expect(select?.closest('label')?.hidden).toBe(false);
    expect(select?.value).toBe('default');
    expect([...(select?.options ?? [])].map((o) => o.textContent)).toEqual(['Ask permissions', 'YOLO mode']);
    // A later connection to a server that knows no modes shows none.
    state = reduce(state, hello({}));
    v.render(state, { ...ctx, role: 'owner' });
    expect(select?.closest('label')?.hidden).toBe(true);
  });
});
