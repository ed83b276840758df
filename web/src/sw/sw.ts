// duet's service worker: shows and withdraws system notifications for the
// pages and for Web Push (also when no page is open), opens the right
// session when one is clicked, and answers an approval from its
// notification's Allow or Deny (with the one-use capability the push
// carried, no page needed). It caches nothing: the API, the board stream
// and the WebSockets always go to the server (there is no fetch handler at
// all, so every request takes the browser's normal path).
import type { PushPayload } from '../generated/protocol';
import type { NotifyItem, OpenMessage, ToWorker } from './messages';

declare const self: ServiceWorkerGlobalScope;

self.addEventListener('install', () => {
  void self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

/** Whether a duet tab is in front of the user (it shows every session's state). */
async function anyVisible(): Promise<boolean> {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  return windows.some((w) => w.visibilityState === 'visible');
}

/**
 * Shows `item` unless a visible tab shows it (every duet tab shows the
 * board, so any visible one shows the session). A tab's request is skipped
 * when another tab already showed that tag; a push (`replace`) shows it
 * again under the same tag, which replaces the first quietly: still one
 * notification, and Chrome sees that the push showed one.
 */
async function show(item: NotifyItem, replace = false): Promise<void> {
  if (await anyVisible()) return;
  if (!replace) {
    const existing = await self.registration.getNotifications({ tag: item.tag });
    if (existing.length > 0) return;
  }
  // Buttons only while their capability lives: a late delivery (a device
  // that was offline) opens the approval instead.
  const live = item.decide !== undefined && item.decide.expires_at > Date.now();
  const options: ShowOptions = {
    body: item.body,
    tag: item.tag,
    data: { url: item.url, decide: live ? item.decide : undefined, requestId: item.requestId },
    icon: 'icons/icon-192.png',
    badge: 'icons/icon-192.png',
  };
  if (live && item.actions) options.actions = item.actions.map((a) => ({ action: a.action, title: a.title }));
  await self.registration.showNotification(item.title, options);
}

/** The options as the worker shows them (`actions` is missing from TypeScript's DOM types). */
type ShowOptions = NotificationOptions & { actions?: { action: string; title: string }[] };

/** What a notification carries in `data`. */
interface NoteData { url: string; requestId?: string; decide?: NonNullable<NotifyItem['decide']> }

function noteData(v: unknown): NoteData {
  if (typeof v !== 'object' || v === null) return { url: './' };
  const d = v as { url?: unknown; decide?: unknown; requestId?: unknown };
  const url = typeof d.url === 'string' ? d.url : './';
  const c = d.decide as { url?: unknown; capability?: unknown; expires_at?: unknown } | undefined;
  const decide = c && typeof c.url === 'string' && typeof c.capability === 'string' && typeof c.expires_at === 'number' ? { url: c.url, capability: c.capability, expires_at: c.expires_at } : undefined;
  const requestId = typeof d.requestId === 'string' ? d.requestId : undefined;
  return { url, ...(decide ? { decide } : {}), ...(requestId !== undefined ? { requestId } : {}) };
}

/**
 * Allow or Deny pressed on `note`: the answer goes to duet with the
 * notification's capability (no cookie: it is the credential). When it is
 * refused (used, expired, decided elsewhere), a notification says so and
 * a tap on it opens the approval.
 */
async function decideFrom(note: Notification, allowed: boolean): Promise<void> {
  const data = noteData(note.data);
  if (!data.decide) return open(data.url);
  let why: string;
  try {
    const res = await fetch(new URL(data.decide.url, self.registration.scope), {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ capability: data.decide.capability, allowed, request_id: data.requestId }),
    });
    if (res.ok) return;
    const body = (await res.json().catch(() => null)) as { error?: { message?: unknown } } | null;
    why = typeof body?.error?.message === 'string' ? body.error.message : `duet answered ${String(res.status)}`;
  } catch (err) {
    why = `duet could not be reached (${String(err)})`;
  }
  await self.registration.showNotification(`${note.title}: not answered`, {
    body: `${why}. Tap to open the approval.`,
    tag: note.tag,
    data: { url: data.url },
    icon: 'icons/icon-192.png',
    badge: 'icons/icon-192.png',
  });
}

async function close(tags: readonly string[]): Promise<void> {
  for (const tag of tags) {
    for (const n of await self.registration.getNotifications({ tag })) n.close();
  }
}

function isToWorker(v: unknown): v is ToWorker {
  if (typeof v !== 'object' || v === null) return false;
  const m = v as { type?: unknown; items?: unknown; tags?: unknown };
  return (m.type === 'notify' && Array.isArray(m.items)) || (m.type === 'close' && Array.isArray(m.tags));
}

/**
 * Messages are handled one at a time: two hidden tabs ask for the same
 * notification at the same moment, and the second must see the first's.
 */
let queue: Promise<void> = Promise.resolve();

async function handle(m: ToWorker): Promise<void> {
  if (m.type === 'close') return close(m.tags);
  for (const item of m.items) await show(item);
}

self.addEventListener('message', (event) => {
  const m: unknown = event.data;
  if (!isToWorker(m)) return;
  queue = queue.then(() => handle(m)).catch((err: unknown) => { console.warn('duet: notification', err); });
  event.waitUntil(queue);
});

function isPushPayload(v: unknown): v is PushPayload {
  if (typeof v !== 'object' || v === null) return false;
  const p = v as Record<string, unknown>;
  if (typeof p.close === 'string') return true;
  return typeof p.tag === 'string' && typeof p.title === 'string' && typeof p.body === 'string' && typeof p.url === 'string';
}

/** Web Push from the server, also while no duet page is open: show, or withdraw (`{close: tag}`). */
async function onPush(p: PushPayload): Promise<void> {
  if ('close' in p) return close([p.close]);
  const actions = Array.isArray(p.actions) ? p.actions.filter((a) => typeof a.action === 'string' && typeof a.title === 'string') : [];
  const decide = noteData({ url: p.url, decide: p.decide }).decide;
  return show({ tag: p.tag, title: p.title, body: p.body, url: p.url, actions, decide, requestId: p.request_id }, true);
}

self.addEventListener('push', (event) => {
  let data: unknown;
  try {
    data = event.data?.json();
  } catch {
    return; // not JSON: not from duet
  }
  if (!isPushPayload(data)) return;
  const p = data;
  queue = queue.then(() => onPush(p)).catch((err: unknown) => { console.warn('duet: push', err); });
  event.waitUntil(queue);
});

/**
 * The browser replaced the subscription (the push service expired it):
 * subscribe again with the same key if it did not, and register the new one
 * with duet (the login cookie goes with the request), then drop the old one.
 */
async function renew(e: PushSubscriptionChangeEvent): Promise<void> {
  const key = e.oldSubscription?.options.applicationServerKey;
  const next = e.newSubscription ?? (key ? await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }) : null);
  if (!next) return;
  const post = (method: string, body: unknown): Promise<Response> =>
    fetch(new URL('api/push/subscriptions', self.registration.scope), { method, credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await post('POST', next.toJSON());
  if (e.oldSubscription && e.oldSubscription.endpoint !== next.endpoint) await post('DELETE', { endpoint: e.oldSubscription.endpoint });
}

self.addEventListener('pushsubscriptionchange', (event) => {
  event.waitUntil(renew(event).catch((err: unknown) => { console.warn('duet: renewing the push subscription', err); }));
});

/** Opens `url` in a duet tab: the focused one, else any, else a new window. */
async function open(url: string): Promise<void> {
  const target = new URL(url, self.registration.scope).href;
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const tab = windows.find((w) => w.focused) ?? windows[0];
  if (!tab) {
    await self.clients.openWindow(target);
    return;
  }
  const message: OpenMessage = { type: 'open', url: target };
  tab.postMessage(message);
  // Focusing needs the click's user activation; without it the tab still navigates.
  await tab.focus().catch(() => undefined);
}

self.addEventListener('notificationclick', (event) => {
  const note = event.notification;
  note.close();
  // A button (Allow, Deny) answers; a tap elsewhere (or a platform without
  // buttons) opens the approval.
  if (event.action === 'allow' || event.action === 'deny') {
    event.waitUntil(decideFrom(note, event.action === 'allow'));
    return;
  }
  event.waitUntil(open(noteData(note.data).url));
});
