// @vitest-environment jsdom
// Terminal output reaches xterm in pieces small enough for xterm to yield to
// the page between them (terminal/terminal.ts: WRITE_PIECE); a character
// split between two pieces still arrives whole.
import { describe, expect, it, vi } from 'vitest';
import { TerminalPane } from '../src/terminal/terminal';

// jsdom has no ResizeObserver; the pane only needs one to exist.
globalThis.ResizeObserver = class {
  observe(): void { /* nothing to observe in jsdom */ }
  unobserve(): void { /* idem */ }
  disconnect(): void { /* idem */ }
};

function pane() {
  const p = new TerminalPane({ input: vi.fn(), resize: vi.fn(), flow: vi.fn(), leave: vi.fn() }, 'dark');
  return { p };
}

describe('TerminalPane.write', () => {
  it('hands a large frame to xterm in pieces of at most 32 KiB, in order, with one flow callback', async () => {
    const { p } = pane();
    const text = `${'x'.repeat((32 << 10) - 1)}€${'y'.repeat(40 << 10)}END`;
    const bytes = new TextEncoder().encode(text);
    const write = vi.spyOn(p.xterm, 'write');
    p.write(bytes);
    const pieces = write.mock.calls.map((c) => c[0] as Uint8Array);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) expect(piece.byteLength).toBeLessThanOrEqual(32 << 10);
    expect(Buffer.concat(pieces)).toEqual(Buffer.from(bytes));
    // Only the last piece reports back to flow control.
    expect(write.mock.calls.slice(0, -1).every((c) => c[1] === undefined)).toBe(true);
    expect(typeof write.mock.calls.at(-1)?.[1]).toBe('function');
    await new Promise<void>((done) => { p.xterm.write('', done); });
    expect(p.flow.backlog).toBe(0);
    // The euro sign straddled the first two pieces and arrived whole.
    expect(p.text()).toContain('x€y');
    p.dispose();
  }, 30_000);

  it('writes a small frame as it is', () => {
    const { p } = pane();
    const write = vi.spyOn(p.xterm, 'write');
    p.write(new TextEncoder().encode('hello'));
    expect(write).toHaveBeenCalledTimes(1);
    p.dispose();
  });
});
