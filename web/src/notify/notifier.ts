// System notifications while the tab is hidden: registers the service worker
// (sw.js), compares each board with the last (notify/attention.ts), and asks
// the worker to show what is new and to close what was decided. A visible
// tab shows the board itself, so it only ever closes; the worker also skips
// what another visible tab shows, and what another tab already notified
// (same tag). Clicking a notification comes back as an `open` message.
import type { Board } from '../generated/protocol';
import type { OpenMessage, ToWorker } from '../sw/messages';
import { attention } from './attention';

const TURN_KEY = 'duet.notify.turnSeconds';
/** A finished turn notifies when it ran at least this long, unless the user set otherwise. */
export const DEFAULT_TURN_SECONDS = 30;

/** The user's threshold for "a turn finished", in seconds. */
export function turnSeconds(): number {
  const v = Number(localStorage.getItem(TURN_KEY));
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_TURN_SECONDS;
}

const OFF_KEY = 'duet.notify.off';

/**
 * The user turned notifications off on this device. A page cannot take back
 * the browser's permission, so duet keeps its own switch: off, it shows none.
 */
export function notificationsOff(): boolean {
  try {
    return localStorage.getItem(OFF_KEY) === 'true';
  } catch {
    return false;
  }
}

/** Turns this device's notifications off or back on. */
export function setNotificationsOff(off: boolean): void {
  if (off) localStorage.setItem(OFF_KEY, 'true');
  else localStorage.removeItem(OFF_KEY);
}

/** Sets the threshold for "a turn finished", in seconds. */
export function setTurnSeconds(seconds: number): void {
  localStorage.setItem(TURN_KEY, String(Math.max(1, Math.round(seconds))));
}

function isOpenMessage(v: unknown): v is OpenMessage {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'open' && typeof (v as { url?: unknown }).url === 'string';
}

/** See the module comment. */
export class Notifier {
  private prev: Board | null = null;
  private registration: ServiceWorkerRegistration | null = null;

  /** `open`: a notification was clicked; go to this address of the app. */
  constructor(private readonly open: (url: URL) => void) {}

  /** Whether this browser can show notifications through a service worker. */
  static get supported(): boolean {
    return 'serviceWorker' in navigator && 'Notification' in window;
  }

  /** Registers the worker (also what makes the app installable). */
  async start(): Promise<void> {
    if (!('serviceWorker' in navigator)) return;
    navigator.serviceWorker.addEventListener('message', (ev: MessageEvent<unknown>) => {
      const m = ev.data;
      if (!isOpenMessage(m)) return;
      const url = new URL(m.url, location.href);
      if (url.origin === location.origin) this.open(url);
    });
    try {
      this.registration = await navigator.serviceWorker.register(new URL('sw.js', document.baseURI), { scope: './' });
    } catch (err) {
      console.warn('duet: no service worker, so no notifications', err);
    }
  }

  /** The service worker, once active. */
  get worker(): ServiceWorkerRegistration | null {
    return this.registration;
  }

  /** A new board from the stream. */
  board(next: Board): void {
    const change = attention(this.prev, next, turnSeconds() * 1000, Date.now());
    this.prev = next;
    if (change.close.length > 0) this.post({ type: 'close', tags: change.close });
    const hidden = document.visibilityState !== 'visible';
    if (change.show.length > 0 && hidden && Notification.permission === 'granted' && !notificationsOff()) this.post({ type: 'notify', items: change.show });
  }

  private post(message: ToWorker): void {
    const worker = this.registration?.active ?? navigator.serviceWorker.controller;
    worker?.postMessage(message);
  }
}
