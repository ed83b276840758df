// Helpers for specs about the service worker's notifications: a spy in the
// worker (every showNotification, every `notify` message, and a switch that
// makes every tab look hidden to the worker), and a way to hide a page.
import { expect, type CDPSession, type Page, type Worker } from '@playwright/test';
import type { PushPayload } from '../src/generated/protocol';

export interface Shown { title: string; body: string; tag: string; url: string }
/** What the test uses of a window client and the worker's `clients` (the page's type library has no worker types). */
interface WindowClientLike { visibilityState: DocumentVisibilityState }
interface ClientsLike { matchAll(options?: unknown): Promise<WindowClientLike[]> }
export interface Spy { __shown: Shown[]; __notifyMessages: number; __lookups: number; __allHidden: boolean; registration: ServiceWorkerRegistration; clients: ClientsLike }

/**
 * In the worker: records every showNotification and every `notify` message,
 * and can make the worker see every tab as hidden. Headless Chromium reports
 * every tab visible whatever is in front, so the test emulates "the user
 * looks at another app": in the worker's view of its clients here, in the
 * pages with `hide`.
 */
export async function spy(sw: Worker): Promise<void> {
  await sw.evaluate(() => {
    const g = self as unknown as Spy & { addEventListener(t: string, f: (e: MessageEvent<{ type?: string }>) => void): void };
    g.__shown = [];
    g.__notifyMessages = 0;
    g.__lookups = 0;
    g.__allHidden = false;
    const reg = g.registration;
    const show = reg.showNotification.bind(reg);
    // The worker looks for an open notification once per message it handles,
    // after the message event (which is all `__notifyMessages` counts).
    const get = reg.getNotifications.bind(reg);
    reg.getNotifications = async (filter?: GetNotificationOptions) => {
      const list = await get(filter);
      g.__lookups++;
      return list;
    };
    reg.showNotification = (title: string, options?: NotificationOptions) => {
      const data = options?.data as { url?: string } | undefined;
      g.__shown.push({ title, body: options?.body ?? '', tag: options?.tag ?? '', url: data?.url ?? '' });
      return show(title, options);
    };
    g.addEventListener('message', (e) => { if (e.data.type === 'notify') g.__notifyMessages++; });
    const clients = g.clients;
    const matchAll = clients.matchAll.bind(clients);
    clients.matchAll = async (options?: unknown) => {
      const list = await matchAll(options);
      if (!g.__allHidden) return list;
      return list.map((c: WindowClientLike) => new Proxy(c, { get: (t, p) => { if (p === 'visibilityState') return 'hidden'; const v = Reflect.get(t, p, t) as unknown; return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v; } }));
    };
  });
}

/** The page behaves as a hidden tab. */
export async function hide(p: Page): Promise<void> {
  await p.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
}

export const shown = (sw: Worker): Promise<Shown[]> => sw.evaluate(() => (self as unknown as Spy).__shown);
export const notifyMessages = (sw: Worker): Promise<number> => sw.evaluate(() => (self as unknown as Spy).__notifyMessages);
export const lookups = (sw: Worker): Promise<number> => sw.evaluate(() => (self as unknown as Spy).__lookups);
export const openNotifications = (sw: Worker, tag: string): Promise<number> => sw.evaluate(async (t) => (await (self as unknown as Spy).registration.getNotifications({ tag: t })).length, tag);

/**
 * Clicks the worker's notification with `tag` (dispatches `notificationclick`
 * as the browser would): its body, or with `action` one of its buttons.
 */
export async function clickNotification(sw: Worker, tag: string, action = ''): Promise<void> {
  await sw.evaluate(async ([t, a]) => {
    const g = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(e: Event): boolean; NotificationEvent: new (type: string, init: { notification: Notification; action: string }) => Event };
    const [note] = await g.registration.getNotifications({ tag: t });
    if (!note) throw new Error('no notification to click');
    g.dispatchEvent(new g.NotificationEvent('notificationclick', { notification: note, action: a }));
  }, [tag, action] as const);
}

/** The buttons (`actions`) of the worker's open notification with `tag`. */
export const notificationActions = (sw: Worker, tag: string): Promise<string[]> =>
  sw.evaluate(async (t) => {
    const [note] = await (self as unknown as Spy).registration.getNotifications({ tag: t });
    const actions = (note as unknown as { actions?: readonly { action: string }[] } | undefined)?.actions ?? [];
    return actions.map((a) => a.action);
  }, tag);

/**
 * Delivers a payload to the app's service worker at `origin` as a push
 * message, through the DevTools protocol of `page` (which may show any
 * origin: the worker is the browser context's).
 */
export async function pusher(page: Page, origin: string): Promise<(payload: PushPayload) => Promise<void>> {
  const cdp: CDPSession = await page.context().newCDPSession(page);
  const registrationId = await new Promise<string>((ok) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
      const r = e.registrations.find((r) => r.scopeURL.startsWith(origin) && !r.isDeleted);
      if (r) ok(r.registrationId);
    });
    void cdp.send('ServiceWorker.enable');
  });
  return async (payload) => {
    await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify(payload) });
  };
}

/**
 * Signs `page` in at `baseURL` with `token`, notifications allowed, and waits
 * for the app's service worker to be active; returns it.
 */
export async function signedInWithWorker(page: Page, baseURL: string, token: string): Promise<Worker> {
  const context = page.context();
  await context.grantPermissions(['notifications'], { origin: baseURL });
  await page.goto(`${baseURL}/?token=${token}`);
  await expect(page.locator('.topbar')).toBeVisible();
  await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state)).toBe('activated');
  return context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
}
