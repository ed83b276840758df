// Web Push for this device: subscribes the service worker with the
// server's VAPID key and registers the subscription, so approvals, long
// turns and exits reach the device while no duet page is open (the worker
// shows them; see sw/sw.ts). Per session, a device can be muted.
import { api } from '../net/api';

/** `applicationServerKey` from the server's base64url key. */
export function keyBytes(b64url: string): Uint8Array<ArrayBuffer> {
  const b64 = b64url.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(b64url.length / 4) * 4, '=');
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** How long the browser's push service may take to hand out a subscription. */
const SUBSCRIBE_TIMEOUT_MS = 15_000;

/** See the module comment. */
export class PushControl {
  /** `registration`: the service worker's, once registered. */
  constructor(private readonly registration: () => ServiceWorkerRegistration | null) {}

  /** Whether this browser can receive Web Push here (it needs https, or localhost). */
  static get supported(): boolean {
    return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
  }

  private get manager(): PushManager | null {
    return this.registration()?.pushManager ?? null;
  }

  /** This device's subscription, if push is on. */
  async current(): Promise<PushSubscription | null> {
    return (await this.manager?.getSubscription()) ?? null;
  }

  /**
   * Turns push on: asks for permission, subscribes with the server's key
   * and registers the subscription. Throws with a message for the user.
   */
  async enable(): Promise<void> {
    const manager = this.manager;
    if (!manager) throw new Error('No service worker: push needs https (or localhost) and a browser that supports it.');
    if (Notification.permission !== 'granted' && (await Notification.requestPermission()) !== 'granted') {
      throw new Error('Notifications are not allowed for this site (see the browser’s site settings).');
    }
    const key = keyBytes(await api.pushKey());
    let sub = await manager.getSubscription();
    const same = sub?.options.applicationServerKey ? sameKey(new Uint8Array(sub.options.applicationServerKey), key) : false;
    if (sub && !same) {
      // Made for another key (duet's state dir was reset): start afresh.
      await sub.unsubscribe();
      sub = null;
    }
    if (!sub) {
      try {
        sub = await withTimeout(manager.subscribe({ userVisibleOnly: true, applicationServerKey: key }), SUBSCRIBE_TIMEOUT_MS);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw new Error(`The browser’s push service did not give a subscription (${why}). Push needs the browser to reach its push service (offline or headless browsers cannot).`, { cause: err });
      }
    }
    await api.pushSubscribe(sub.toJSON());
  }

  /** Turns push off for this device (server first, so nothing more is sent). */
  async disable(): Promise<void> {
    const sub = await this.current();
    if (!sub) return;
    await api.pushUnsubscribe(sub.endpoint).catch(() => undefined);
    await sub.unsubscribe();
  }

  /** Registers the subscription again (at start: the server may have lost or pruned it). */
  async renew(): Promise<void> {
    const sub = await this.current();
    if (sub) await api.pushSubscribe(sub.toJSON());
  }

  /** Whether session `id` is muted on this device (null: push is off). */
  async muted(id: string): Promise<boolean | null> {
    const sub = await this.current();
    if (!sub) return null;
    const device = (await api.pushDevices()).find((d) => d.endpoint === sub.endpoint);
    return device ? device.muted.includes(id) : null;
  }

  /** Mutes or unmutes session `id` on this device. */
  async setMuted(id: string, muted: boolean): Promise<void> {
    const sub = await this.current();
    if (!sub) throw new Error('Push is off on this device.');
    await api.pushMute(sub.endpoint, id, muted);
  }
}

function sameKey(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((ok, fail) => {
    const timer = setTimeout(() => { fail(new Error(`no answer in ${String(ms / 1000)} s`)); }, ms);
    p.then((v) => { clearTimeout(timer); ok(v); }, (e: unknown) => { clearTimeout(timer); fail(e instanceof Error ? e : new Error(String(e))); });
  });
}
