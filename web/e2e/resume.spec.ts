// Resume: an ended session the server calls resumable offers "Resume" (chat
// header, terminal banner, sidebar). The endpoint's answers are stubbed here
// (POST /api/sessions/{id}/resume, 201 with the new session), so this checks
// the browser's side of the contract: the request, the error shown by the
// button that asked, and opening the new session.
import { join } from 'node:path';
import { expect, screenshotDir, sendChat, startSession, test } from './fixtures';

test('Resume shows a refusal next to the button, and opens the new session on success', async ({ loggedIn: page, duet }) => {
  // The server marks sessions resumable once their profile can resume; pretend this one can.
  // The session list comes from the board stream: stand in for it with one board per
  // request (the browser reconnects 200 ms later and gets the next).
  let ended = '';
  let resumed = '';
  await page.route('**/api/sessions/watch', async (route) => {
    const res = await page.request.get(`${duet.baseURL}/api/sessions`);
    const list = (await res.json()) as { id: string; status: string; resumable: boolean; created_at: number }[];
    const sessions = list
      .map((s) => (s.id === ended && s.status === 'exited' ? { ...s, resumable: true } : s.id === resumed ? { ...s, resumed_from: ended } : s))
      .sort((a, b) => b.created_at - a.created_at)
      .map((s) => ({ session: s, last_activity: s.created_at, pending: [] }));
    await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: `retry: 200\nevent: sessions\ndata: ${JSON.stringify({ sessions })}\n\n` });
  });
  await page.reload();
  ended = await startSession(page, 'demo');
  let attempts = 0;
  await page.route(`**/api/sessions/${ended}/resume`, async (route) => {
    expect(route.request().method()).toBe('POST');
    attempts++;
    if (attempts === 1) {
      await route.fulfill({ status: 409, json: { error: { code: 'not_resumable', message: 'the agent has not said which conversation this was' } } });
      return;
    }
    // Stand in for the server: a fresh session of the same profile.
    const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile: 'demo' } });
    const info = (await res.json()) as { id: string };
    resumed = info.id;
    await route.fulfill({ status: 201, json: { ...info, resumed_from: ended } });
  });

  await sendChat(page, '/quit');
  const header = page.locator('.chat-status');
  const resume = header.getByRole('button', { name: 'Resume' });
  await expect(resume).toBeVisible();
  // Over the terminal and in the sidebar too.
  await expect(page.locator('.term-banner').getByRole('button', { name: 'Resume' })).toBeVisible();
  const row = page.locator(`.session-row[data-session-id="${ended}"]`);
  await expect(row.getByRole('button', { name: 'Resume' })).toBeVisible();

  await resume.click();
  await expect(header.locator('.resume-error')).toHaveText('Could not resume: the agent has not said which conversation this was');
  // Local to the action: not a message in the conversation, not in the sidebar.
  await expect(page.locator('.chat-log .notice')).toHaveCount(0);
  await expect(row.locator('.resume-error')).toBeHidden();
  await page.screenshot({ path: join(screenshotDir, 'resume-refused-light.png') });

  await row.getByRole('button', { name: 'Resume' }).click();
  await expect.poll(() => resumed).not.toBe('');
  await expect(page).toHaveURL(new RegExp(`#/session/${resumed}$`));
  await expect(page.locator('.session-title')).toContainText(`resumed from ${ended.slice(0, 8)}`);
  // The new chat says where it came from, with a way back.
  const note = page.locator('.chat-log .resumed-note');
  await expect(note).toHaveText(`Resumed from an earlier session (${ended.slice(0, 8)}).`);
  await note.getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`#/session/${ended}$`));
});
