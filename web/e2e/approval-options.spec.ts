// Approval cards: the agent's options, answered in one tab, seen in every tab
// as "sent, waiting for the agent" until the agent confirms; and the keyboard.
import { expect, expectTerminal, openSession, sendChat, startSession, test, type Duet } from './fixtures';
import type { Page } from '@playwright/test';

/** The session's program pid (it leads its own process group). */
async function agentPid(page: Page, duet: Duet, id: string): Promise<number> {
  const res = await page.request.get(`${duet.baseURL}/api/sessions/${encodeURIComponent(id)}`);
  const info = (await res.json()) as { pid?: number };
  if (info.pid === undefined) throw new Error('the session has no pid');
  return info.pid;
}

test('a choice made in tab A shows in both tabs: sent and waiting, then the outcome', async ({ loggedIn: a, duet }) => {
  const id = await startSession(a, 'demo');
  const b = await a.context().newPage();
  await openSession(b, duet, id);

  await sendChat(a, 'run touch x');
  const cardA = a.locator('[data-kind=tool]').last();
  const cardB = b.locator('[data-kind=tool]').last();
  for (const card of [cardA, cardB]) {
    await expect(card).toHaveAttribute('data-tool-status', 'awaiting_approval');
    // Exactly the agent's options, in its order, in its words.
    await expect(card.locator('.approval-buttons button')).toHaveText(['1Allow', '2Deny']);
  }

  // Hold the agent still, so its confirmation cannot overtake what we look at.
  const pid = await agentPid(a, duet, id);
  process.kill(-pid, 'SIGSTOP');
  try {
    await cardA.getByRole('button', { name: 'Allow' }).click();
    for (const card of [cardA, cardB]) {
      await expect(card.locator('[data-approval-state=sent]')).toHaveText('Sent — waiting for the agent… (you chose “Allow”)');
      await expect(card).toHaveAttribute('data-tool-status', 'sent');
      await expect(card.locator('.approval-buttons')).toHaveCount(0);
    }
    await expect(b.getByRole('status')).toContainText('waiting for the agent');
  } finally {
    process.kill(-pid, 'SIGCONT');
  }
  for (const card of [cardA, cardB]) {
    await expect(card.locator('[data-approval-state=allowed]')).toHaveText('Allowed in the browser.');
    await expect(card).toHaveAttribute('data-tool-status', 'done');
  }
});

test('a focused approval card answers to the keyboard, and the terminal keeps its keys', async ({ loggedIn: page }) => {
  await startSession(page, 'demo');
  const cardFor = (text: string) => page.locator('[data-kind=tool]', { hasText: text });
  const approvalOf = (text: string) => cardFor(text).getByRole('group', { name: /^Approve/ });

  await sendChat(page, 'run echo typed-in-terminal');
  await expect(approvalOf('typed-in-terminal')).toBeVisible();
  await expectTerminal(page, /\[y\] yes/);
  // A digit typed into the terminal is the agent's (its own "2 = no"), not the card's.
  await page.locator('.terminal-pane .xterm').click();
  await page.keyboard.press('2');
  await expect(cardFor('typed-in-terminal').locator('[data-approval-state=denied]')).toHaveText('Denied in the terminal.');

  await sendChat(page, 'run echo keyboard-denied');
  const group = approvalOf('keyboard-denied');
  await group.focus();
  await expect(group).toBeFocused();
  await expect(group.locator('.approval-keys')).toHaveText('Enter: Allow · Esc: Deny · 1–2: pick an option');
  await page.keyboard.press('2');
  const card = cardFor('keyboard-denied');
  await expect(card).toHaveAttribute('data-tool-status', 'denied');
  await expect(card.locator('[data-approval-state=denied]')).toHaveText('Denied in the browser.');
  // The keyboard stays on the card after its buttons went away.
  await expect.poll(() => card.evaluate((el) => el.contains(document.activeElement))).toBe(true);

  await sendChat(page, 'run echo keyboard-allowed');
  await approvalOf('keyboard-allowed').focus();
  await page.keyboard.press('Enter');
  const next = cardFor('keyboard-allowed');
  await expect(next).toHaveAttribute('data-tool-status', 'done');
  await expect(next.locator('.tool-result pre')).toContainText('keyboard-allowed');
});
