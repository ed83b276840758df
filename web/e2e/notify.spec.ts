// Notifications in a hidden tab: the service worker shows one per approval
// (with the session's name, the tool and its input), none while a tab is
// visible, none twice; a click opens the session at that approval; a
// decision elsewhere closes it. Installable: the manifest and its icons.
import { expect, startSession, test, waitGreeted } from './fixtures';
import { clickNotification, hide, lookups, notifyMessages, openNotifications as open, shown, spy, type Spy } from './sw-spy';

test('a hidden tab is told of an approval once; the click opens it; a decision closes it', async ({ loggedIn: page, duet }) => {
  const context = page.context();
  await context.grantPermissions(['notifications'], { origin: duet.baseURL });

  // Installable: a manifest with icons, a worker at the root that caches nothing.
  const manifest = await page.request.get(`${duet.baseURL}/manifest.webmanifest`);
  expect(manifest.headers()['content-type']).toBe('application/manifest+json');
  const m = (await manifest.json()) as { icons: { src: string; sizes: string }[]; display: string };
  expect(m.display).toBe('standalone');
  expect(m.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
  for (const i of m.icons) expect((await page.request.get(`${duet.baseURL}/${i.src}`)).headers()['content-type']).toBe('image/png');

  await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state)).toBe('activated');
  const sw = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
  await spy(sw);

  const id = await startSession(page, 'demo');
  await page.request.patch(`${duet.baseURL}/api/sessions/${id}`, { data: { name: 'nightly' } });
  await expect(page.locator('.session-title')).toContainText('nightly');

  // While the tab is visible, the approval is on screen: no notification.
  await page.request.post(`${duet.baseURL}/api/sessions/${id}/submit`, { data: { text: 'run echo seen-on-screen' } });
  await expect(page.locator('.approval[data-approval-state=pending]')).toBeVisible();
  await expect(page.locator(`.session-row[data-session-id="${id}"] .session-badge`)).toHaveText('1 approval');
  const first = (await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/approvals`)).json()) as { request_id: string; state: string }[];
  await page.request.post(`${duet.baseURL}/api/sessions/${id}/approvals/${first[0]?.request_id ?? ''}`, { data: { allowed: false } });
  await expect(page.locator('.approval[data-approval-state=pending]')).toHaveCount(0);
  expect(await notifyMessages(sw)).toBe(0);

  // A second tab on the board; then the user looks at another app: both tabs are hidden.
  const board = await context.newPage();
  await board.goto(`${duet.baseURL}/#/board`);
  await expect(board.locator(`.board-card[data-session-id="${id}"]`)).toHaveCount(1);
  await hide(page);
  await hide(board);
  await sw.evaluate(() => { const g = self as unknown as Spy; g.__allHidden = true; g.__lookups = 0; });
  await page.request.post(`${duet.baseURL}/api/sessions/${id}/submit`, { data: { text: 'run echo while-away' } });
  // Both tabs ask; the worker shows it once. A message is received before it
  // is handled (the worker asks for the tabs and the open notifications
  // first): wait until both were handled, not only received.
  await expect.poll(() => notifyMessages(sw)).toBe(2);
  await expect.poll(() => lookups(sw)).toBeGreaterThanOrEqual(2);
  const all = await shown(sw);
  expect(all).toHaveLength(1);
  const n = all[0];
  expect(n?.title).toBe('nightly: allow run_shell_command?');
  expect(n?.body).toBe('echo while-away');
  expect(n?.url).toMatch(new RegExp(`^\\./#/session/${id}/approval/.+`));
  expect(await open(sw, n?.tag ?? '')).toBe(1);

  // Clicked: a tab opens the session at that approval.
  await page.evaluate(() => { location.hash = '#/board'; });
  await clickNotification(sw, n?.tag ?? '');
  await expect.poll(() => [page.url(), board.url()].some((u) => u.includes(`#/session/${id}/approval/`))).toBe(true);
  const clicked = page.url().includes('/approval/') ? page : board;
  await waitGreeted(clicked);
  await expect(clicked.locator(`.approval[data-request-id]`)).toBeFocused();
  expect(await shown(sw)).toHaveLength(1);

  // Decided elsewhere (the REST API): the notification is closed by its tag.
  const pending = (await (await page.request.get(`${duet.baseURL}/api/sessions/${id}/approvals`)).json()) as { request_id: string; state: string }[];
  const rid = pending.find((a) => a.state === 'pending')?.request_id ?? '';
  await page.request.post(`${duet.baseURL}/api/sessions/${id}/approvals/${rid}`, { data: { allowed: true } });
  await expect.poll(() => open(sw, n?.tag ?? '')).toBe(0);
  expect(await shown(sw)).toHaveLength(1);
  await board.close();
});
