// The live board: the sidebar and the board view follow the server's stream
// (GET /api/sessions/watch), never a poll; what needs attention comes first;
// a rename in one tab shows in the other at once.
import { expect, sendChat, startSession, test, waitGreeted } from './fixtures';

test('the board and the sidebar follow approvals and renames live, approvals first', async ({ loggedIn: page, duet }) => {
  // The page must never poll the session list.
  const listCalls: string[] = [];
  const watch = (p: typeof page): void => {
    p.on('request', (r) => {
      if (new URL(r.url()).pathname === '/api/sessions' && r.method() === 'GET') listCalls.push(r.url());
    });
  };
  // Other specs share this worker's duet: start from an empty board.
  const existing = await page.request.get(`${duet.baseURL}/api/sessions`);
  for (const s of (await existing.json()) as { id: string }[]) {
    await page.request.delete(`${duet.baseURL}/api/sessions/${encodeURIComponent(s.id)}?purge=true`);
  }
  watch(page);
  const first = await startSession(page, 'demo');
  const res = await page.request.post(`${duet.baseURL}/api/sessions`, { data: { profile: 'demo' } });
  expect(res.status()).toBe(201);
  const second = ((await res.json()) as { id: string }).id;
  // The session started elsewhere appears, newest first while nothing waits.
  const rows = page.locator('.session-list[aria-label="Running sessions"] .session-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toHaveAttribute('data-session-id', second);

  // A second tab on the board.
  const board = await page.context().newPage();
  watch(board);
  await board.goto(`${duet.baseURL}/#/board`);
  await expect(board.getByRole('heading', { name: 'Board' })).toBeVisible();
  const cards = board.locator('.board-card');
  await expect(cards).toHaveCount(2);
  await expect(cards.first()).toHaveAttribute('data-session-id', second);

  // An approval in the first session: it moves to the top, with the tool and its input.
  await sendChat(page, 'run echo from-the-board');
  await expect(cards.first()).toHaveAttribute('data-session-id', first);
  await expect(cards.first()).toHaveClass(/board-waiting/);
  await expect(cards.first().locator('.board-approval')).toContainText('echo from-the-board');
  await expect(cards.first()).toContainText('needs approval');
  const boardRows = board.locator('.session-list[aria-label="Running sessions"] .session-row');
  await expect(boardRows.first()).toHaveAttribute('data-session-id', first);
  await expect(boardRows.first().locator('.session-badge')).toHaveText('1 approval');
  // The first tab is watching it: the board says who.
  await expect(cards.first()).toContainText('watching: Chrome on Linux');

  // Renamed on the board: the other tab's sidebar and title follow.
  await cards.first().getByRole('button', { name: /^Rename session/ }).click();
  const input = board.getByRole('textbox', { name: /^New name for session/ });
  await input.fill('release notes');
  await input.press('Enter');
  await expect(cards.first().locator('.board-open')).toHaveText('release notes');
  await expect(rows.first().locator('.session-name')).toHaveText('release notes');
  await expect(page.locator('.session-title')).toContainText('release notes');

  // Allowed in the first tab: the board drops the approval.
  await page.locator('[data-kind=tool]').last().getByRole('button', { name: 'Allow' }).click();
  await expect(board.locator('.board-waiting')).toHaveCount(0);
  await expect(cards.first()).toHaveAttribute('data-session-id', second);

  // Renamed in the sidebar (the other way round), and kept by the server.
  await page.locator(`.session-row[data-session-id="${second}"] .session-rename`).click();
  const sideInput = page.getByRole('textbox', { name: /^New name for session/ });
  await sideInput.fill('second one');
  await sideInput.press('Enter');
  await expect(board.locator(`.board-card[data-session-id="${second}"] .board-open`)).toHaveText('second one');
  const info = (await (await page.request.get(`${duet.baseURL}/api/sessions/${second}`)).json()) as { name?: string };
  expect(info.name).toBe('second one');

  // Opening from the board goes to the session.
  await board.locator(`.board-card[data-session-id="${first}"] .board-open`).click();
  await expect(board).toHaveURL(new RegExp(`#/session/${first}$`));
  await waitGreeted(board);
  expect(listCalls).toEqual([]);
  await board.close();
});
