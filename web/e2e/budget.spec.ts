// Budgets in the browser: a profile's budget of one turn holds the next
// prompt, the chat (a warning, the held prompt's note, the status line) and
// the board say why, and the owner raises it on the board, which lets the
// held prompt go; the status line then shows what the agent spent.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, sendChat, startDuet, startSession, stopDuet, test } from './fixtures';

test('a spent budget holds the next prompt and says why, on the board too, until the owner raises it there', async ({ page }) => {
  const file = join(mkdtempSync(join(tmpdir(), 'duet-e2e-config-')), 'duet.toml');
  writeFileSync(
    file,
    ['[[profile]]', 'name = "demo"', 'command = "{duet}"', 'args = ["demo-agent", "--json-file", "{events_file}", "--input-file", "{input_file}"]', '[[budget]]', 'turns = 1', ''].join('\n'),
  );
  const { duet, proc } = await startDuet(['--config', file]);
  try {
    await page.goto(`${duet.baseURL}/?token=${duet.token}`);
    await expect(page.locator('.topbar')).toBeVisible();
    const id = await startSession(page, 'demo');
    await sendChat(page, 'hello budget');
    await expect(page.locator('.chat-log')).toContainText('hello budget');
    // One turn spent: the status line says why the next prompt waits.
    const usage = page.locator('.chat-status .status-usage');
    await expect(usage).toHaveText('Budget spent: the budget of 1 turn is spent');
    await expect(page.locator('.chat-log')).toContainText('the budget of 1 turn is spent: prompts are held until an owner raises the budget');
    await sendChat(page, 'second prompt');
    // Held, and the prompt says so (not "until the agent is ready").
    const held = page.locator('.chat-log [data-kind="pending"][data-pending-state="queued"]');
    await expect(held).toContainText('second prompt');
    await expect(held.locator('.pending-note')).toHaveText('held: the budget of 1 turn is spent; it goes when an owner raises the budget (on the board)');
    const events = async (): Promise<string> => (await page.request.get(`${duet.baseURL}/api/sessions/${id}/events`, { headers: { authorization: `Bearer ${duet.token}` } })).text();
    expect(await events()).toContain('hello budget');
    expect(await events()).not.toContain('second prompt');

    // The board says why, and the owner raises the budget there.
    await page.evaluate(() => { location.hash = '#/board'; });
    const card = page.locator(`.board-card[data-session-id="${id}"]`);
    await expect(card.locator('.board-usage')).toHaveText(/^\d+(\.\d)?k? tokens · 1 turn$/);
    const budget = card.locator('.board-budget');
    await expect(budget).toHaveAttribute('data-budget', 'spent');
    await expect(budget.locator('.budget-text')).toHaveText('Budget spent: the budget of 1 turn is spent — prompts wait');
    await card.getByRole('button', { name: 'Raise budget' }).click();
    const turns = card.getByLabel('Turns');
    await expect(turns).toHaveValue('2');
    await turns.fill('5');
    await card.getByRole('button', { name: 'Save' }).click();
    await expect(budget).toHaveAttribute('data-budget', 'ok');
    await expect(budget.locator('.budget-text')).toHaveText('Budget: 5 turns');
    // The held prompt went: the agent took it and its turn counts.
    await expect(card.locator('.board-usage')).toHaveText(/ · 2 turns$/);
    await expect.poll(events).toContain('second prompt');
    await page.goBack();
    await expect(page.locator('.chat-log [data-kind="pending"]')).toHaveCount(0);
    await expect(usage).toHaveText(/^\d+(\.\d)?k? tokens · 2 turns$/);
  } finally {
    await stopDuet(proc, duet.stateDir);
  }
});
