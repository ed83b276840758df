// A long chat is windowed: only the entries near the view have elements, so
// a session with thousands of events keeps a small DOM; scrolling to the top
// shows the first prompt; a pending approval thousands of entries up is
// reached with the "Approval waiting" control and answered from its card;
// the Markdown export still holds every entry (it is made from the state).
// The agent is a stand-in that writes the events at once and waits.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { expect, startDuet, stopDuet, test } from './fixtures';

/** Replies after the waiting approval: thousands of entries between it and the end. */
const REPLIES = 3000;
const FIRST = 'FIRST PROMPT of the long session';
const LAST = `reply ${String(REPLIES - 1)} (the last)`;

/** A prompt, a tool call whose approval is never answered, then `REPLIES` replies (no prompt or result: the approval stays pending). */
function events(): string {
  const lines: unknown[] = [
    { type: 'system', subtype: 'session_start', data: { model: 'stand-in' } },
    { type: 'user', uuid: 'u0', message: { role: 'user', content: [{ type: 'text', text: FIRST }] } },
    { type: 'assistant', uuid: 'a0', message: { id: 'm0', role: 'assistant', content: [{ type: 'tool_use', id: 't0', name: 'run_shell_command', input: { command: 'echo far up' } }] } },
    { type: 'control_request', request_id: 'r0', request: { subtype: 'can_use_tool', tool_name: 'run_shell_command', tool_use_id: 't0', input: { command: 'echo far up' } } },
  ];
  for (let i = 0; i < REPLIES; i++) {
    // Replies of one to four paragraphs: entries of different heights.
    const text = i === REPLIES - 1 ? LAST : Array.from({ length: 1 + (i % 4) }, (_, p) => `reply ${String(i)}, paragraph ${String(p)}: ${'words '.repeat(8 + ((i * 7) % 30))}`).join('\n\n');
    lines.push({ type: 'assistant', uuid: `a${String(i + 1)}`, message: { id: `m${String(i + 1)}`, role: 'assistant', content: [{ type: 'text', text }] } });
  }
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/** Elements in the chat log, and its entries drawn and in all (`aria-setsize`). */
async function logSize(page: Page): Promise<{ nodes: number; drawn: number; total: number }> {
  return page.locator('.chat-log').evaluate((log) => {
    const drawn = log.querySelectorAll(':scope > [data-kind]');
    return { nodes: log.querySelectorAll('*').length, drawn: drawn.length, total: Number(drawn[drawn.length - 1]?.getAttribute('aria-setsize') ?? 0) };
  });
}

/**
 * Scrolls the log up by `px` and says how far the entry at the top of the
 * view moved on screen once the list has drawn and measured what came into
 * its margin (three frames): `px` when nothing jumped.
 */
async function stepUp(page: Page, px: number): Promise<number> {
  return page.locator('.chat-log').evaluate(async (log, by) => {
    const frame = (): Promise<void> => new Promise((ok) => { requestAnimationFrame(() => { ok(); }); });
    const top = log.getBoundingClientRect().top;
    const first = [...log.querySelectorAll<HTMLElement>(':scope > [data-kind]')].find((e) => e.getBoundingClientRect().bottom > top + 1);
    if (!first) throw new Error('no entry in view');
    const before = first.getBoundingClientRect().top;
    log.scrollTop -= by;
    for (let i = 0; i < 3; i++) await frame();
    if (!first.isConnected) throw new Error('the entry in view was taken out');
    return first.getBoundingClientRect().top - before;
  }, px);
}

test('a long chat keeps a small DOM; its top, a far pending approval and its export are all there', async ({ browser }) => {
  test.setTimeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'duet-e2e-long-'));
  const history = join(dir, 'events.jsonl');
  writeFileSync(history, events());
  const agent = 'import sys, time\nwith open(sys.argv[2], "a") as out, open(sys.argv[1]) as h:\n    out.write(h.read())\nprint("written", flush=True)\ntime.sleep(3600)\n';
  const config = join(dir, 'duet.toml');
  writeFileSync(config, `[[profile]]\nname = "long"\ncommand = "python3"\nargs = ["-c", ${JSON.stringify(agent)}, ${JSON.stringify(history)}, "{events_file}", "{input_file}"]\n`);
  const own = await startDuet(['--config', config]);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  try {
    await page.goto(`${own.duet.baseURL}/?token=${own.duet.token}`);
    const res = await page.request.post(`${own.duet.baseURL}/api/sessions`, { data: { profile: 'long' } });
    const { id } = (await res.json()) as { id: string };
    await expect.poll(async () => ((await (await page.request.get(`${own.duet.baseURL}/api/sessions/${id}`)).json()) as { last_seq: number }).last_seq).toBe(REPLIES + 4);
    await page.goto(`${own.duet.baseURL}/#/session/${encodeURIComponent(id)}`);
    await page.getByRole('button', { name: 'Chat', exact: true }).click();

    // The end is shown, and only the entries near it have elements.
    await expect(page.locator('.chat-log [data-kind=assistant]').last()).toContainText(LAST);
    const size = await logSize(page);
    expect(size.total).toBe(REPLIES + 2);
    expect(size.drawn).toBeLessThan(100);
    expect(size.nodes).toBeLessThan(1500);

    // The approval thousands of entries up: its control takes the reader there, and it is answered from its card.
    const jump = page.locator('.approval-jump');
    await expect(jump).toBeVisible();
    await jump.click();
    const card = page.locator('.approval[data-request-id="r0"]');
    await expect(card).toBeFocused();
    await expect.poll(() => card.evaluate((c) => {
      const r = c.getBoundingClientRect();
      const v = c.closest('.chat-log')?.getBoundingClientRect();
      return v !== undefined && r.top >= v.top && r.bottom <= v.bottom;
    })).toBe(true);
    await expect(jump).toBeHidden();
    await expect(page.locator('.chat-log [data-kind=user]').first()).toContainText(FIRST);
    await card.getByRole('button', { name: 'Allow' }).click();
    await expect(page.locator('[data-tool-use-id="t0"] [data-approval-state]')).not.toHaveAttribute('data-approval-state', 'pending');
    expect((await logSize(page)).drawn).toBeLessThan(100);

    // Back at the end, then up through entries never drawn: what is on screen moves with the scroll, no more.
    await page.locator('.chat-log').evaluate((log) => { log.scrollTop = log.scrollHeight; });
    await expect(page.locator('.chat-log [data-kind=assistant]').last()).toContainText(LAST);
    for (let i = 0; i < 15; i++) expect(Math.abs((await stepUp(page, 250)) - 250)).toBeLessThan(1.5);

    // The very top, reached by scrolling: the first prompt.
    await page.locator('.chat-log').evaluate((log) => { log.scrollTop = 0; });
    await expect(page.locator('.chat-log [data-kind=user]').first()).toBeInViewport();
    await expect(page.locator('.chat-log [data-kind=user]').first()).toContainText(FIRST);
    expect((await logSize(page)).drawn).toBeLessThan(100);

    // The export is made from the state: every entry, drawn or not.
    await page.locator('.export-menu > summary').click();
    const [d] = await Promise.all([page.waitForEvent('download'), page.getByRole('menuitem', { name: 'Chat (Markdown)' }).click()]);
    const md = readFileSync(await d.path(), 'utf8');
    expect(md).toContain(`## You\n\n${FIRST}`);
    expect(md.split('## Agent\n\n').length - 1).toBe(REPLIES);
    expect(md).toContain(`## Agent\n\n${LAST}`);
    expect(md).toContain('reply 1500, paragraph 0');
  } finally {
    await page.context().close();
    await stopDuet(own.proc, own.duet.stateDir);
  }
});
