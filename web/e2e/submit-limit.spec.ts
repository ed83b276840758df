// A prompt is never lost to a refusal: over the size limit it is not sent
// and stays in the box; one the server refuses comes back into the box.
import { expect, sendChat, startSession, test } from './fixtures';

test('a prompt over 256 KiB stays in the box with the reason, and nothing is sent', async ({ loggedIn: page }) => {
  const submits: string[] = [];
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => {
      if (typeof f.payload === 'string' && f.payload.startsWith('{"type":"submit"')) submits.push(f.payload);
    });
  });
  await startSession(page, 'demo');
  const box = page.getByRole('textbox', { name: 'Message' });
  const huge = 'x'.repeat(300 * 1024);
  await box.fill(huge);
  await box.press('Enter');
  await expect(page.getByRole('alert').filter({ hasText: 'a prompt can be at most 256 KiB' })).toContainText('300 KiB (307,200 bytes)');
  expect((await box.inputValue()).length).toBe(huge.length);
  await expect(page.locator('.chat-log [data-kind=pending], .chat-log [data-kind=user]')).toHaveCount(0);

  // The next prompt goes through, and it is the only one that went out.
  await sendChat(page, 'a short one');
  await expect(page.locator('.chat-log [data-kind=user]', { hasText: 'a short one' })).toHaveCount(1);
  await expect(page.locator('.composer-error')).toBeHidden();
  expect(submits.map((s) => (JSON.parse(s) as { text: string }).text)).toEqual(['a short one']);
});

test('a prompt the server refuses comes back into the box', async ({ loggedIn: page }) => {
  // The server answers this tab's submits with an error (as it does for a
  // prompt it cannot take), instead of passing them on.
  await page.routeWebSocket(/\/ws/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((m) => { ws.send(m); });
    ws.onMessage((m) => {
      if (typeof m === 'string' && m.startsWith('{"type":"submit"')) {
        const { id } = JSON.parse(m) as { id: string };
        ws.send(JSON.stringify({ type: 'error', id, code: 'too_large', message: 'submit refused by the test' }));
        return;
      }
      server.send(m);
    });
  });
  await startSession(page, 'demo');
  const box = page.getByRole('textbox', { name: 'Message' });
  await sendChat(page, 'please keep me');
  await expect(page.locator('.chat-log .notice-error')).toContainText('submit refused by the test');
  await expect(box).toHaveValue('please keep me');
  await expect(page.locator('.chat-log [data-kind=pending]')).toHaveCount(0);
});
