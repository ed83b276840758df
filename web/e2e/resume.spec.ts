// Resume: an ended session the server calls resumable offers "Resume" (chat
// header, terminal banner, sidebar). The first test stubs the endpoint's
// answers (POST /api/sessions/{id}/resume, 201 with the new session), so it
// checks the browser's side of the contract: the request, the error shown by
// the button that asked, and opening the new session. The second resumes
// for real, on a duet of its own whose profile is the scripted stream-json
// agent of the server's tests (resumable: its handshake names its
// conversation): the earlier chat shows above the new one, in every tab,
// after a reload, and along a chain of resumptions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, screenshotDir, sendChat, startDuet, startSession, stopDuet, test, webRoot } from './fixtures';
import type { Page } from '@playwright/test';

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
  let asked: unknown;
  await page.route(`**/api/sessions/${ended}/resume`, async (route) => {
    expect(route.request().method()).toBe('POST');
    asked = route.request().postDataJSON();
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

  // The new session is to start at this window's size, as a new one would (the pane the ended one has).
  const pane = await page.evaluate(() => { const t = window.duet?.screen(); return { cols: t?.cols, rows: t?.rows }; });
  await row.getByRole('button', { name: 'Resume' }).click();
  await expect.poll(() => resumed).not.toBe('');
  expect(asked).toEqual(pane);
  await expect(page).toHaveURL(new RegExp(`#/session/${resumed}$`));
  await expect(page.locator('.session-title')).toContainText(`resumed from ${ended.slice(0, 8)}`);
  // The new chat says where it came from, with a way back.
  const note = page.locator('.chat-log .resumed-note');
  await expect(note).toHaveText(`Resumed from an earlier session (${ended.slice(0, 8)}).`);
  await note.getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`#/session/${ended}$`));
});

/** The chat log's visible entries in order: headings, the resumed note, and message texts. */
async function chatOrder(page: Page): Promise<string[]> {
  return page.locator('.chat-log > :not([hidden])').evaluateAll((els) =>
    els.map((e) => (e.classList.contains('history-heading') ? `heading ${(e as HTMLElement).dataset.sessionId ?? ''}` : e.classList.contains('resumed-note') ? 'resumed' : e.textContent.trim())),
  );
}

test('a resumed session shows the earlier conversation above its own, in every tab and after a reload', async ({ browser }) => {
  const script = resolve(webRoot, '../server/tests/fixtures/fake_stream_json.py');
  const configDir = mkdtempSync(join(tmpdir(), 'duet-e2e-config-'));
  const config = join(configDir, 'duet.toml');
  writeFileSync(config, `[[profile]]\nname = "fake"\ncommand = "python3"\nargs = [${JSON.stringify(script)}]\nchannel = "stream_json"\nresume_args = [${JSON.stringify(script)}, "--resume", "{agent_session_id}"]\n`);
  const own = await startDuet(['--config', config]);
  try {
    const page = await browser.newPage();
    await page.goto(`${own.duet.baseURL}/?token=${own.duet.token}`);
    const first = await startSession(page, 'fake');
    await sendChat(page, 'hello one');
    await expect(page.locator('.chat-log .msg.assistant').last()).toContainText('Echo: hello one');
    await page.request.delete(`${own.duet.baseURL}/api/sessions/${first}`);
    const resume = page.locator('.chat-status').getByRole('button', { name: 'Resume' });
    await resume.click();
    await expect(page).not.toHaveURL(new RegExp(`#/session/${first}$`));
    const second = decodeURIComponent(new URL(page.url()).hash.replace('#/session/', ''));
    await expect(page.locator('.history-heading')).toHaveCount(1);
    await sendChat(page, 'hello two');
    await expect(page.locator('.chat-log .msg.assistant').last()).toContainText('Echo: hello two');
    const want = [`heading ${first}`, 'hello one', 'Echo: hello one', 'resumed', 'hello two', 'Echo: hello two'];
    const inOrder = async (p: Page, expected: string[]) => {
      await expect.poll(async () => (await chatOrder(p)).filter((t) => expected.includes(t))).toEqual(expected);
    };
    await inOrder(page, want);
    // Another tab, and a reload: the same.
    const other = await browser.newPage();
    await other.goto(`${own.duet.baseURL}/?token=${own.duet.token}`);
    await other.goto(`${own.duet.baseURL}/#/session/${second}`);
    await inOrder(other, want);
    await page.reload();
    await inOrder(page, want);
    await page.screenshot({ path: join(screenshotDir, 'resume-history-light.png') });

    // A resumption of the resumption carries the whole chain.
    await page.request.delete(`${own.duet.baseURL}/api/sessions/${second}`);
    await page.locator('.chat-status').getByRole('button', { name: 'Resume' }).click();
    await expect(page).not.toHaveURL(new RegExp(`#/session/${second}$`));
    await expect(page.locator('.history-heading')).toHaveCount(2);
    await inOrder(page, [`heading ${first}`, 'hello one', 'Echo: hello one', `heading ${second}`, 'hello two', 'Echo: hello two', 'resumed']);
    await other.close();
    await page.close();
  } finally {
    await stopDuet(own.proc, own.duet.stateDir);
    rmSync(configDir, { recursive: true, force: true });
  }
});
