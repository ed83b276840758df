// @vitest-environment jsdom
// A program that ended with work under way (it exited, or duet was killed
// and the session recovered): a tool call without its result did not
// finish, and prompts the server held show as not delivered, text and all,
// until a client lets go of them.
import { describe, expect, it, vi } from 'vitest';
import type { ServerMessage, SidecarEvent } from '../src/generated/protocol';
import { historySegments } from '../src/chat/history';
import { initialChatState, reduce, reduceAll, type ChatInput, type ChatState, type ToolItem } from '../src/chat/state';
import { ChatView } from '../src/chat/view';
import { hello } from './fixture';

const toolUse = (id: string): SidecarEvent => ({ type: 'assistant', message: { id: `m-${id}`, role: 'assistant', content: [{ type: 'tool_use', id, name: 'run_shell_command', input: { command: 'sleep 600' } }] } });
const toolResult = (id: string): SidecarEvent => ({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] } });
const userText = (text: string): SidecarEvent => ({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } });
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

describe('unsent prompts', () => {
  const unsent = (prompts: { n: number; text: string }[]): ServerMessage => ({ type: 'unsent', prompts, held: [] });

  it('replace the queued prompt this tab sent, and stay until discarded', () => {
    let s = reduceAll(initialChatState, [hello(), { type: 'local_submit', id: 's1', text: 'held one' }, { type: 'ack', id: 's1', queued: true }]);
    expect(s.pending).toEqual([{ id: 's1', text: 'held one', state: 'queued' }]);
    s = reduceAll(s, [unsent([{ n: 1, text: 'held one' }]), killed]);
    expect(s.pending).toEqual([{ id: 'unsent:1', text: 'held one', state: 'unsent', n: 1 }]);
    // An echo of the same words (typed again) is not the server's unsent prompt.
    expect(reduce(s, event(1, userText('held one'))).pending).toHaveLength(1);
    // Another tab let go of it.
    expect(reduce(s, unsent([])).pending).toEqual([]);
  });

  it('come with the hello, in a recovered session and in the session that resumed it', () => {
    const s = reduce(initialChatState, hello({ status: 'exited', exit: { success: false }, unsent: [{ n: 2, text: 'two' }, { n: 3, text: 'three' }] }));
    expect(s.pending.map((p) => [p.id, p.state])).toEqual([['unsent:2', 'unsent'], ['unsent:3', 'unsent']]);
    expect(reduce(s, { type: 'local_discard', id: 'unsent:2' }).pending.map((p) => p.text)).toEqual(['three']);
  });

  it('show their text; the session that resumed them offers to send them, an ended one only to let go', () => {
    const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn(() => Promise.resolve()) };
    const v = new ChatView(cb);
    document.body.replaceChildren(v.root);
    const channel = { kind: 'dual_output', events: true, submit: true, approve: true };
    const entry = () => v.root.querySelector<HTMLElement>('[data-pending-state="unsent"]');
    const buttons = () => [...(entry()?.querySelectorAll('button') ?? [])].map((b) => b.textContent);

    const ended = reduce(initialChatState, hello({ status: 'exited', exit: { success: false, signal: 'SIGKILL' }, unsent: [{ n: 1, text: 'held one' }] }));
    v.render(ended, { channel, connected: true, resumable: true });
    expect(entry()?.querySelector('.bubble')?.textContent).toBe('held one');
    expect(entry()?.textContent).toContain('Not delivered: the program ended before it took this prompt.');
    expect(buttons()).toEqual(['Dismiss']);
    // A viewer may read it, not let go of it.
    v.render(ended, { channel, connected: true, resumable: true, role: 'viewer' });
    expect(buttons()).toEqual([]);

    const resumed = reduce(initialChatState, hello({ unsent: [{ n: 1, text: 'held one' }] }));
    v.render(resumed, { channel, connected: true, resumable: false, resumedFrom: 'a' });
    expect(entry()?.textContent).toContain('the earlier session ended before its agent took this prompt');
    expect(buttons()).toEqual(['Send it now', 'Dismiss']);
    entry()?.querySelector('button')?.click();
    expect(cb.onDiscard).toHaveBeenCalledWith('unsent:1');
    expect(cb.onSubmit).toHaveBeenCalledWith('held one');
  });
});
