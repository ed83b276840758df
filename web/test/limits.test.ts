// @vitest-environment jsdom
// The prompt size limit: the composer's figure is the server's, counts bytes
// of UTF-8 as the server does, and a prompt over it stays in the box.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { MAX_SUBMIT_BYTES, tooLongToSend } from '../src/chat/limits';
import { initialChatState } from '../src/chat/state';
import { ChatView } from '../src/chat/view';

const ctx = { channel: { kind: 'dual_output', events: true, submit: true, approve: true }, connected: true, resumable: false };

function composer() {
  const cb = { onSubmit: vi.fn(() => true), onApprove: vi.fn(), onCancel: vi.fn(), onShowTerminal: vi.fn(), onResume: vi.fn(() => Promise.resolve()), onDiscard: vi.fn(), onSetMode: vi.fn(() => Promise.resolve()), onSetModel: vi.fn(() => Promise.resolve()) };
  const v = new ChatView(cb);
  document.body.replaceChildren(v.root);
  v.render(initialChatState, ctx);
  const input = v.root.querySelector('textarea');
  if (!input) throw new Error('no composer');
  const enter = (): void => { input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })); };
  const alert = (): HTMLElement | null => v.root.querySelector<HTMLElement>('.composer-error:not([hidden])');
  return { v, cb, input, enter, alert };
}

describe('the prompt size limit', () => {
  it('is the server’s MAX_SUBMIT_BYTES (protocol/src/command.rs)', () => {
    const rust = readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), '../../protocol/src/command.rs'), 'utf8');
    const m = /pub const MAX_SUBMIT_BYTES: usize = (\d+) << (\d+);/.exec(rust);
    expect(m, 'MAX_SUBMIT_BYTES changed shape in command.rs: update this test and src/chat/limits.ts').not.toBeNull();
    expect(MAX_SUBMIT_BYTES).toBe(Number(m?.[1]) * 2 ** Number(m?.[2]));
  });

  it('counts bytes of UTF-8, not characters', () => {
    expect(tooLongToSend('x'.repeat(MAX_SUBMIT_BYTES))).toBeUndefined();
    expect(tooLongToSend('x'.repeat(MAX_SUBMIT_BYTES + 1))).toContain('257 KiB (262,145 bytes)');
    // 3 bytes each: 87,381 fit (262,143 bytes), 87,382 do not.
    expect(tooLongToSend('€'.repeat(87_381))).toBeUndefined();
    expect(tooLongToSend('€'.repeat(87_382))).toContain('262,146 bytes');
    // 4 bytes each (a surrogate pair in UTF-16).
    expect(tooLongToSend('😀'.repeat(65_537))).toContain('262,148 bytes');
  });

  it('keeps a prompt over the limit in the box, says why, and sends nothing', () => {
    const { cb, input, enter, alert } = composer();
    const text = 'x'.repeat(300 * 1024);
    input.value = text;
    enter();
    expect(cb.onSubmit).not.toHaveBeenCalled();
    expect(input.value).toBe(text);
    expect(alert()?.getAttribute('role')).toBe('alert');
    expect(alert()?.textContent).toContain('300 KiB (307,200 bytes); a prompt can be at most 256 KiB');
    // Shortened: the note goes with the edit, and it sends.
    input.value = 'short';
    input.dispatchEvent(new Event('input'));
    expect(alert()).toBeNull();
    enter();
    expect(cb.onSubmit).toHaveBeenCalledWith('short');
    expect(input.value).toBe('');
  });

  it('puts a prompt the server refused back into the box, ahead of anything typed since', () => {
    const { v, input, enter } = composer();
    input.value = 'refused prompt';
    enter();
    expect(input.value).toBe('');
    v.restoreDraft('refused prompt');
    expect(input.value).toBe('refused prompt');
    input.value = 'typed since';
    v.restoreDraft('refused prompt');
    expect(input.value).toBe('refused prompt\ntyped since');
  });
});
