// Web Push in the browser: duet pushes to a push service written for the
// test (e2e/push-service.ts decrypts each message as a browser would), and
// the test hands the message to the service worker through the DevTools
// protocol, as the browser's push service would. It shows a notification unless a visible tab shows the session, replaces
// rather than doubles one a hidden tab already asked for, opens the session
// at the approval when clicked, and is withdrawn by `{close: tag}`. The
// bell menu's push switch explains that a headless browser cannot reach a
// push service. (VAPID and delivery in depth: server/tests/push.rs.)
import type { PushPayload } from '../src/generated/protocol';
import { expect, startDuet, startSession, stopDuet, test, waitGreeted } from './fixtures';
import { pushService } from './push-service';
import { clickNotification, hide, openNotifications, pusher, shown, signedInWithWorker, spy, type Spy } from './sw-spy';

test('a push from duet shows once, not over a visible tab; its click opens the approval; {close} withdraws it', async ({ page }) => {
  const service = await pushService();
  const { duet, proc } = await startDuet(['--push-insecure-loopback']);
  try {
    const sw = await signedInWithWorker(page, duet.baseURL, duet.token);
    await spy(sw);
    const deliver = await pusher(page, duet.baseURL);
    // A device as a browser makes one; its pushes come to `service`.
    const device = service.device('phone');
    expect((await page.request.post(`${duet.baseURL}/api/push/subscriptions`, { data: device.json })).status()).toBe(201);

    const id = await startSession(page, 'demo');
    await page.request.patch(`${duet.baseURL}/api/sessions/${id}`, { data: { name: 'nightly' } });
    await page.request.post(`${duet.baseURL}/api/sessions/${id}/submit`, { data: { text: 'run echo pushed' } });
    await expect(page.locator('.approval[data-approval-state=pending]')).toBeVisible();
    const pending = (await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/approvals`)).json()) as { request_id: string }[];
    const rid = pending[0]?.request_id ?? '';
    const tag = `duet-approval-${id}-${rid}`;
    const approval = await service.next('phone', (p) => 'tag' in p && p.tag === tag);
    expect(approval).toMatchObject({ tag, title: 'nightly: allow run_shell_command?', body: 'echo pushed', url: `./#/session/${id}/approval/${rid}`, kind: 'approval', session: id, request_id: rid });

    // The tab is visible and shows the approval: the push shows nothing.
    // (Pushes are handled in order: once the next one shows, this one was skipped.)
    await deliver(approval);
    await page.evaluate(() => { location.hash = '#/board'; });
    await hide(page);
    await sw.evaluate(() => { (self as unknown as Spy).__allHidden = true; });
    const turn: PushPayload = { tag: `duet-turn-${id}`, title: 'nightly: turn finished', body: 'The agent finished after 40 s.', url: `./#/session/${id}`, kind: 'turn', session: id };
    await deliver(turn);
    await expect.poll(async () => (await shown(sw)).map((n) => n.tag)).toEqual([`duet-turn-${id}`]);

    // Hidden: the approval shows; pushed again, still one.
    await deliver(approval);
    await expect.poll(() => openNotifications(sw, tag)).toBe(1);
    await deliver(approval);
    await expect.poll(async () => (await shown(sw)).length).toBe(3);
    expect(await openNotifications(sw, tag)).toBe(1);
    expect((await shown(sw))[1]).toEqual({ title: 'nightly: allow run_shell_command?', body: 'echo pushed', tag, url: `./#/session/${id}/approval/${rid}` });

    // Clicked: the tab opens the session at that approval.
    await clickNotification(sw, tag);
    await expect.poll(() => page.url()).toContain(`#/session/${id}/approval/${rid}`);
    await waitGreeted(page);
    await expect(page.locator(`.approval[data-request-id="${rid}"][data-approval-state=pending]`)).toBeVisible();

    // Decided elsewhere: duet pushes {close}, which withdraws it.
    await deliver(approval);
    await expect.poll(() => openNotifications(sw, tag)).toBe(1);
    await page.request.post(`${duet.baseURL}/api/sessions/${id}/approvals/${rid}`, { data: { allowed: true } });
    const close = await service.next('phone', (p) => 'close' in p);
    expect(close).toEqual({ close: tag });
    await deliver(close);
    await expect.poll(() => openNotifications(sw, tag)).toBe(0);
    expect(await openNotifications(sw, `duet-turn-${id}`)).toBe(1);
  } finally {
    await stopDuet(proc, duet.stateDir);
    await service.close();
  }
});

test('the bell menu: an SVG bell, and a clear error where the browser has no push service', async ({ loggedIn: page, duet }) => {
  await page.context().grantPermissions(['notifications'], { origin: duet.baseURL });
  await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state)).toBe('activated');
  const bell = page.locator('.notify-toggle');
  await expect(bell.locator('svg.icon-bell')).toHaveCount(1);
  expect(await bell.textContent()).toBe('');
  await bell.click();
  const box = page.getByLabel('Push to this device (also with duet closed)');
  await expect(box).not.toBeChecked();
  // click, not check(): the failure unticks the box again at once.
  await box.click();
  // Headless Chromium offline cannot subscribe with a real push service.
  await expect(page.locator('.push-status')).toContainText('push service', { timeout: 30_000 });
  await expect(box).not.toBeChecked();
  const devices = (await (await page.request.get(`${duet.baseURL}/api/push/subscriptions`)).json()) as unknown[];
  expect(devices).toEqual([]);
});
