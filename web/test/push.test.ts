// The VAPID key as the browser's applicationServerKey: base64url without
// padding, decoded to the 65 bytes of an uncompressed P-256 point.
import { describe, expect, it } from 'vitest';
import { keyBytes } from '../src/notify/push';

describe('keyBytes', () => {
  it('decodes unpadded base64url', () => {
    const bytes = Uint8Array.from({ length: 65 }, (_, i) => (i * 37 + 250) % 256);
    const b64url = Buffer.from(bytes).toString('base64url');
    expect(b64url).not.toContain('=');
    expect([...keyBytes(b64url)]).toEqual([...bytes]);
  });

  it('keeps the characters base64url replaces', () => {
    expect([...keyBytes('-_8')]).toEqual([0xfb, 0xff]);
  });
});
