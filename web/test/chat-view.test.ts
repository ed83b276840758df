// @vitest-environment jsdom
// The chat pane's DOM: sanitised markdown, tool cards, approval buttons, keyed updates.
import { describe, expect, it, vi } from 'vitest';
import { renderMarkdown } from '../src/chat/markdown';
import { ChatView } from '../src/chat/view';
import { initialChatState, reduce, reduceAll } from '../src/chat/state';
import { loadQwenEvents } from './fixture';

const events = loadQwenEvents();
/** Index of the control_request event (not the handshake that merely names the type). */
const req = events.findIndex((m) => JSON.stringify(m.event).startsWith('{"type":"control_request"'));
const channel = { kind: 'dual_output', events: true, submit: true, approve: true };
const ctx = { channel, connected: true, resumable: false };

function view() {
  const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()) };
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
