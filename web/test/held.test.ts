// Prompts the server holds for a busy agent are shown in every tab of the
// session, not only the one that sent them, and again after a reload; the
// tab that sent one shows it once (the server's entry takes the place of
// its own), and each leaves the list when the agent takes it.
import { describe, expect, it } from 'vitest';
import type { HeldPrompt, ServerMessage, SidecarEvent } from '../src/generated/protocol';
import { initialChatState, reduce, reduceAll } from '../src/chat/state';
import { hello } from './fixture';

const prompts = (held: HeldPrompt[], unsent: HeldPrompt[] = []): ServerMessage => ({ type: 'unsent', prompts: unsent, held });
const userText = (text: string): SidecarEvent => ({ type: 'user', message: { role: 'user', content: [{ type: 'text', text }] } });
const shown = (s: { pending: readonly { text: string; state: string }[] }) => s.pending.map((p) => [p.text, p.state]);

describe('held prompts', () => {
  it('show in a tab that did not send them, and in the hello of a tab opened later', () => {
    const other = reduceAll(initialChatState, [hello(), prompts([{ n: 2, text: 'held one' }])]);
    expect(shown(other)).toEqual([['held one', 'queued']]);
    const later = reduce(initialChatState, hello({ held: [{ n: 2, text: 'held one' }, { n: 3, text: 'held two' }] }));
    expect(shown(later)).toEqual([['held one', 'queued'], ['held two', 'queued']]);
  });

  it("take the place of the sending tab's own entry, whether the ack or the list comes first", () => {
    const list = prompts([{ n: 2, text: 'held one' }]);
    const ack: ServerMessage = { type: 'ack', id: 's1', queued: true };
    for (const order of [[ack, list], [list, ack]]) {
      const s = reduceAll(initialChatState, [hello(), { type: 'local_submit', id: 's1', text: 'held one' }, ...order]);
      expect(s.pending).toEqual([{ id: 'held:2', text: 'held one', state: 'queued', held: 2 }]);
    }
  });

  it('leave the list when handed to the agent, shown on their way until the echo', () => {
    let s = reduceAll(initialChatState, [hello(), prompts([{ n: 2, text: 'held one' }, { n: 3, text: 'held two' }])]);
    s = reduce(s, prompts([{ n: 3, text: 'held two' }]));
    expect(shown(s)).toEqual([['held one', 'sending'], ['held two', 'queued']]);
    s = reduce(s, { type: 'event', seq: 1, event: userText('held one') });
    expect(shown(s)).toEqual([['held two', 'queued']]);
  });

  it('become unsent when the program ends first, in one message', () => {
    let s = reduceAll(initialChatState, [hello(), prompts([{ n: 2, text: 'held one' }])]);
    s = reduce(s, prompts([], [{ n: 2, text: 'held one' }]));
    expect(s.pending).toEqual([{ id: 'unsent:2', text: 'held one', state: 'unsent', n: 2 }]);
  });
});
