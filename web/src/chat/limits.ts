// How long a prompt may be. The server refuses a longer one, and by then the
// box would have been cleared: the composer checks first and keeps the text.

/**
 * The longest prompt the server takes, in bytes of UTF-8. The same figure as
 * `MAX_SUBMIT_BYTES` in protocol/src/command.rs (a constant, so not in the
 * generated types); test/limits.test.ts fails when the two differ.
 */
export const MAX_SUBMIT_BYTES = 256 * 1024;

const encoder = new TextEncoder();

/** Why `text` cannot be sent (too long), or undefined when it can. */
export function tooLongToSend(text: string): string | undefined {
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4):
  // most prompts need no encoding to be known short enough.
  if (text.length * 3 <= MAX_SUBMIT_BYTES) return undefined;
  const bytes = encoder.encode(text).length;
  if (bytes <= MAX_SUBMIT_BYTES) return undefined;
  const kib = (n: number): string => `${String(Math.ceil(n / 1024))} KiB`;
  return `Not sent: this message is ${kib(bytes)} (${bytes.toLocaleString('en')} bytes); a prompt can be at most ${kib(MAX_SUBMIT_BYTES)} (${MAX_SUBMIT_BYTES.toLocaleString('en')} bytes). It is still in the box: shorten it, or send it in parts.`;
}
