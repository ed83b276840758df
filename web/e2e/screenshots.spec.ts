// Screenshots of the main views, for people to look at (test-results/screenshots/).
import { join } from 'node:path';
import { expect, sendChat, screenshotDir, startSession, test } from './fixtures';

test('main views', async ({ loggedIn: page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await startSession(page, 'demo');
  await sendChat(page, 'Hello! What can you do?');
  await expect(page.getByRole('status')).toContainText('Idle');
  await sendChat(page, 'run ls -la');
  await page.locator('[data-kind=tool]').last().getByRole('button', { name: 'Allow' }).click();
  await expect(page.getByRole('status')).toContainText('Idle');
  await sendChat(page, 'edit notes.txt');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card.getByRole('button', { name: 'Allow' })).toBeVisible();

  await page.screenshot({ path: join(screenshotDir, 'split-dark.png') });
  await card.screenshot({ path: join(screenshotDir, 'approval-card-dark.png') });

  await page.getByRole('button', { name: /Switch to the light theme/ }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.screenshot({ path: join(screenshotDir, 'split-light.png') });
  await card.screenshot({ path: join(screenshotDir, 'approval-card-light.png') });

  await page.getByRole('button', { name: 'Chat', exact: true }).click();
  await page.screenshot({ path: join(screenshotDir, 'chat-only-light.png') });
  await page.getByRole('button', { name: 'Terminal', exact: true }).click();
  await page.screenshot({ path: join(screenshotDir, 'terminal-only-light.png') });
  await page.getByRole('button', { name: 'Split', exact: true }).click();

  // A phone: chat first, stacked, big approval buttons.
  await page.getByRole('button', { name: /Switch to the dark theme/ }).click();
  await page.setViewportSize({ width: 390, height: 844 });
  // Nothing wider than the phone: the page never scrolls sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await card.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(screenshotDir, 'narrow-dark.png') });
  const allow = card.getByRole('button', { name: 'Allow' });
  const box = await allow.boundingBox();
  expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  await page.getByRole('button', { name: 'Sessions' }).click();
  // The drawer slides in; shoot once it is all the way in.
  await expect.poll(async () => (await page.locator('#sidebar').boundingBox())?.x).toBe(0);
  await page.screenshot({ path: join(screenshotDir, 'narrow-sidebar.png') });
});

test('approval options, a sent answer, a slash command and an ending', async ({ loggedIn: page, duet }) => {
  // An agent with more to say than yes/no (as Qwen Code or Claude Code offer):
  // the demo agent's Allow/Deny become four options on the wire, both ways.
  const options = [
    { id: 'proceed_once', label: 'Yes, allow once', kind: 'allow_once' },
    { id: 'proceed_always', label: 'Yes, allow always for this command', kind: 'allow_always' },
    { id: 'cancel', label: 'No, tell the agent what to do instead', kind: 'reject_once' },
    { id: 'never', label: 'No, and don’t ask again', kind: 'reject_always' },
  ];
  const toServer: Record<string, string> = { proceed_once: 'allow', proceed_always: 'allow', cancel: 'deny', never: 'deny' };
  const toClient: Record<string, string> = { allow: 'proceed_once', deny: 'cancel' };
  interface Frame { type: string; approvals?: Frame[]; chosen?: string; options?: unknown; option?: string }
  const dress = (a: Frame): Frame => ({ ...a, options, ...(a.chosen !== undefined ? { chosen: toClient[a.chosen] ?? a.chosen } : {}) });
  await page.routeWebSocket(/\/ws/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((m) => {
      if (typeof m !== 'string') { ws.send(m); return; }
      const f = JSON.parse(m) as Frame;
      if (f.type === 'approval') { ws.send(JSON.stringify(dress(f))); return; }
      if (f.type === 'hello') { ws.send(JSON.stringify({ ...f, approvals: (f.approvals ?? []).map(dress) })); return; }
      ws.send(m);
    });
    ws.onMessage((m) => {
      if (typeof m !== 'string') { server.send(m); return; }
      const f = JSON.parse(m) as Frame;
      if (f.type === 'approve' && f.option !== undefined) { server.send(JSON.stringify({ ...f, option: toServer[f.option] ?? f.option })); return; }
      server.send(m);
    });
  });
  const id = await startSession(page, 'demo');
  await sendChat(page, '/help');
  await sendChat(page, 'run git status --short');
  const card = page.locator('[data-kind=tool]').last();
  await expect(card.locator('.approval-buttons button')).toHaveCount(4);
  await card.getByRole('group').focus();
  await card.screenshot({ path: join(screenshotDir, 'approval-options-light.png') });

  // Answered while the agent is held still: "sent, waiting for the agent".
  const res = await page.request.get(`${duet.baseURL}/api/sessions/${encodeURIComponent(id)}`);
  const pid = ((await res.json()) as { pid: number }).pid;
  process.kill(-pid, 'SIGSTOP');
  try {
    await card.getByRole('button', { name: 'Yes, allow once' }).click();
    await expect(card.locator('[data-approval-state=sent]')).toBeVisible();
    await card.screenshot({ path: join(screenshotDir, 'approval-sent-light.png') });
  } finally {
    process.kill(-pid, 'SIGCONT');
  }
  await expect(card.locator('[data-approval-state=allowed]')).toHaveText('Allowed in the browser (“Yes, allow once”).');
  await page.getByRole('button', { name: 'Chat', exact: true }).click();
  await page.screenshot({ path: join(screenshotDir, 'chat-options-command-light.png') });

  await page.getByRole('button', { name: 'Split', exact: true }).click();
  await sendChat(page, '/quit');
  await expect(page.locator('.term-banner')).toBeVisible();
  await page.screenshot({ path: join(screenshotDir, 'ended-light.png') });
});
