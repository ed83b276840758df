// A Web Push service for browser tests: duet (with --push-insecure-loopback)
// POSTs to http://127.0.0.1:<port>/push/<device>; each body is decrypted
// (RFC 8291 aes128gcm) with keys the test made for the device, as a
// browser would, and kept until the test asks for it.
import { createDecipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PushPayload } from '../src/generated/protocol';

/** A device: its `PushSubscription` JSON for duet, and its keys. */
export interface FakeDevice {
  readonly json: { endpoint: string; keys: { p256dh: string; auth: string } };
}

interface Keys { ecdh: ECDH; auth: Buffer }

/** Decrypts one aes128gcm body for the device with `keys`. */
function decrypt(body: Buffer, keys: Keys): PushPayload {
  const salt = body.subarray(0, 16);
  const idlen = body[20] ?? 0;
  const asPublic = body.subarray(21, 21 + idlen);
  const sealed = body.subarray(21 + idlen);
  const uaPublic = keys.ecdh.getPublicKey();
  const shared = keys.ecdh.computeSecret(asPublic);
  const info = Buffer.concat([Buffer.from('WebPush: info\0'), uaPublic, asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, keys.auth, info, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  const plain = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
  let end = plain.length;
  while (end > 0 && plain[end - 1] === 0) end--;
  if (plain[end - 1] !== 2) throw new Error('no last-record delimiter');
  return JSON.parse(plain.subarray(0, end - 1).toString('utf8')) as PushPayload;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { ok(Buffer.concat(chunks)); });
    req.on('error', fail);
  });
}

/** Starts the service on 127.0.0.1:0. */
export async function pushService(): Promise<{
  device(name: string): FakeDevice;
  next(name: string, match: (p: PushPayload) => boolean): Promise<PushPayload>;
  close(): Promise<void>;
}> {
  const keys = new Map<string, Keys>();
  const got = new Map<string, PushPayload[]>();
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const name = decodeURIComponent((req.url ?? '').replace(/^\/push\//, ''));
      const k = keys.get(name);
      if (req.method !== 'POST' || !k || req.headers['content-encoding'] !== 'aes128gcm' || !String(req.headers.authorization).startsWith('vapid t=')) {
        res.writeHead(400).end();
        return;
      }
      got.set(name, [...(got.get(name) ?? []), decrypt(body, k)]);
      res.writeHead(201).end();
      for (const w of waiters) w();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    device(name) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      keys.set(name, { ecdh, auth });
      return { json: { endpoint: `http://127.0.0.1:${String(port)}/push/${encodeURIComponent(name)}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } } };
    },
    /** The first message to `name` that `match`es (waits for it; the test's timeout bounds the wait). */
    next(name, match) {
      return new Promise((ok) => {
        const look = (): void => {
          const found = (got.get(name) ?? []).find(match);
          if (found) {
            waiters.delete(look);
            ok(found);
          }
        };
        waiters.add(look);
        look();
      });
    },
    close() {
      return new Promise((ok) => { server.close(() => { ok(); }); });
    },
  };
}
