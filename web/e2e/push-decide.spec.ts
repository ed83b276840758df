// Deciding from a notification, in Chromium: duet pushes an approval (the
// in-test push service decrypts it as a browser would) with Allow and Deny
// and a one-use capability to the owner's device, and without them to a
// viewer's. With every duet tab closed, the push reaches the service worker
// (DevTools protocol), which shows the buttons; pressing Allow (a
// `notificationclick` with its action) makes the worker answer duet by
// itself; the tool runs, and the chat says the answer came from a
// notification. The capability cannot be used twice, nor for another
// approval. (The endpoint in depth: server/tests/push_decide.rs.)
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page, Worker } from '@playwright/test';
import type { Approval, PushPayload, PushShow } from '../src/generated/protocol';
import { expect, startDuet, stopDuet, test, waitGreeted } from './fixtures';
import { pushService } from './push-service';
import { clickNotification, notificationActions, openNotifications, pusher, signedInWithWorker } from './sw-spy';

/** A config with the demo agent and a viewer's named token; its token. */
function configWithViewer(): { file: string; viewer: string } {
  const viewer = randomBytes(16).toString('hex');
  const sha = createHash('sha256').update(viewer).digest('hex');
  const file = join(mkdtempSync(join(tmpdir(), 'duet-e2e-config-')), 'duet.toml');
  writeFileSync(
    file,
    [
      '[[profile]]',
      'name = "demo"',
      'command = "{duet}"',
      'args = ["demo-agent", "--json-file", "{events_file}", "--input-file", "{input_file}"]',
      '[[token]]',
      'name = "watcher"',
      'role = "viewer"',
      `sha256 = "${sha}"`,
      '',
    ].join('\n'),
  );
  return { file, viewer };
}

const isShow = (p: PushPayload): p is PushShow => 'tag' in p;

/** The app's service worker (the context's; after a restart of it, the new one). */
async function worker(page: Page): Promise<Worker> {
  const context = page.context();
  const live = context.serviceWorkers().at(-1);
  return live ?? context.waitForEvent('serviceworker');
}

test('Allow on a notification decides the approval with no page open, once, and only that one', async ({ page }) => {
  const service = await pushService();
  const { file, viewer } = configWithViewer();
  const { duet, proc } = await startDuet(['--push-insecure-loopback', '--config', file]);
  try {
    const context = page.context();
    await signedInWithWorker(page, duet.baseURL, duet.token);
    const api = (path: string): string => `${duet.baseURL}${path}`;
    const owner = { authorization: `Bearer ${duet.token}` };
    // The owner's phone, and a viewer's device.
    const phone = service.device('phone');
    expect((await page.request.post(api('/api/push/subscriptions'), { data: phone.json })).status()).toBe(201);
    const watcher = service.device('watcher');
    expect((await page.request.post(api('/api/push/subscriptions'), { data: watcher.json, headers: { authorization: `Bearer ${viewer}` } })).status()).toBe(201);

    // A page that shows no duet: what keeps the DevTools session (the push's way in) once every duet tab is closed.
    const blank = await context.newPage();
    const deliver = await pusher(blank, duet.baseURL);
    const created = await page.request.post(api('/api/sessions'), { data: { profile: 'demo' } });
    const id = ((await created.json()) as { id: string }).id;
    await page.close();

    await blank.request.post(api(`/api/sessions/${id}/submit`), { data: { text: 'run echo from-a-notification' }, headers: owner });
    const approval = await service.next('phone', (p) => isShow(p) && p.kind === 'approval');
    if (!isShow(approval)) throw new Error('not a notification');
    expect(approval.actions).toEqual([{ action: 'allow', title: 'Allow' }, { action: 'deny', title: 'Deny' }]);
    expect(approval.body).toBe('echo from-a-notification');
    const capability = approval.decide?.capability ?? '';
    expect(capability).toMatch(/^[0-9a-f]{64}$/);
    const toViewer = await service.next('watcher', (p) => isShow(p) && p.tag === approval.tag);
    if (!isShow(toViewer)) throw new Error('not a notification');
    expect(toViewer.actions === undefined && toViewer.decide === undefined).toBe(true);

    // No duet page is open. The viewer's push shows without buttons (a
    // viewer may not approve); the owner's, under the same tag, with them.
    await deliver(toViewer);
    const sw = await worker(blank);
    await expect.poll(() => openNotifications(sw, approval.tag)).toBe(1);
    expect(await notificationActions(sw, approval.tag)).toEqual([]);
    await deliver(approval);
    await expect.poll(() => notificationActions(sw, approval.tag)).toEqual(['allow', 'deny']);
    expect(await openNotifications(sw, approval.tag)).toBe(1);

    // Allow: the worker answers duet by itself; the tool runs.
    await clickNotification(sw, approval.tag, 'allow');
    const rid = approval.request_id ?? '';
    await expect.poll(async () => {
      const list = (await (await blank.request.get(api(`/api/sessions/${id}/approvals`), { headers: owner })).json()) as Approval[];
      const a = list.find((x) => x.request_id === rid);
      return a ? `${a.state} ${a.decided_by ?? ''}` : '';
    }).toBe('allowed notification');
    await expect.poll(async () => (await blank.request.get(api(`/api/sessions/${id}/events`), { headers: owner })).text()).toMatch(/tool_result[^\n]*from-a-notification/);

    // The same capability again: refused.
    const again = await blank.request.post(api('/api/push/decide'), { data: { capability, allowed: false } });
    expect(again.status()).toBe(401);

    // A second approval: its capability opens it only.
    await blank.request.post(api(`/api/sessions/${id}/submit`), { data: { text: 'run echo second' }, headers: owner });
    const second = await service.next('phone', (p) => isShow(p) && p.kind === 'approval' && p.tag !== approval.tag);
    if (!isShow(second)) throw new Error('not a notification');
    const misused = await blank.request.post(api('/api/push/decide'), { data: { capability: second.decide?.capability ?? '', allowed: true, request_id: rid } });
    expect(misused.status()).toBe(403);
    expect(((await (await blank.request.get(api(`/api/sessions/${id}/approvals`), { headers: owner })).json()) as Approval[]).find((a) => a.request_id === second.request_id)?.state).toBe('pending');

    // The chat says where the decision came from.
    const tab = await context.newPage();
    await tab.goto(`${duet.baseURL}/#/session/${encodeURIComponent(id)}`);
    await waitGreeted(tab);
    await expect(tab.locator('.approval-done[data-approval-state=allowed]').first()).toHaveText('Allowed from a notification.');
  } finally {
    await stopDuet(proc, duet.stateDir);
    await service.close();
  }
});
