// A page that opens a session with a history fetches it over HTTP and
// connects its socket from where that ends (net/backlog.ts): opened while the
// agent is still writing events, it must end with every event applied once,
// in order — the same transcript the reducer makes of the server's events.
// The stand-in agent writes a recorded Qwen Code conversation (repeated with
// fresh ids), then streams more of it while the page loads.
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { initialChatState, reduce, type ChatState } from '../src/chat/state';
import type { ServerMessage } from '../src/generated/protocol';
import { expect, startDuet, stopDuet, test, webRoot } from './fixtures';

const FIXTURE = resolve(webRoot, '../server/tests/fixtures/qwen-0.15.10/busy-submits/events.jsonl');

/** The fixture's turns `reps` times, each copy with its own ids. */
function turns(reps: number, tag: string): string[] {
  const lines = readFileSync(FIXTURE, 'utf8').split('\n').filter((l) => l.trim() !== '' && !l.includes('"subtype":"session_end"'));
  const out: string[] = [];
  for (let r = 0; r < reps; r++) {
    for (const l of lines) out.push(l.replace(/"(id|uuid|tool_use_id|request_id)":"([^"]+)"/g, (_, k: string, v: string) => `"${k}":"${v}-${tag}${String(r)}"`));
  }
  return out;
}

/** A transcript as comparable lines. */
function transcript(s: ChatState): string[] {
  return s.items.map((i) => `${i.kind} ${i.id} ${'text' in i ? i.text : ''}`);
}

test('a session opened while its agent writes shows every event once, in order', async ({ browser }) => {
  test.setTimeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'duet-e2e-load-'));
  const history = join(dir, 'history.jsonl');
  const tail = join(dir, 'tail.jsonl');
  const go = join(dir, 'go');
  writeFileSync(history, `${turns(30, 'h').join('\n')}\n`);
  writeFileSync(tail, `${turns(15, 't').join('\n')}\n`);
  const agent = join(webRoot, 'bench/replay_agent.py');
  const config = join(dir, 'duet.toml');
  writeFileSync(config, `[[profile]]\nname = "writer"\ncommand = "python3"\nargs = [${[agent, history, tail, go, '{events_file}', '0.002', '/dev/null', '{input_file}'].map((a) => JSON.stringify(a)).join(', ')}]\n`);
  const own = await startDuet(['--config', config]);
  const page = await browser.newPage();
  try {
    const base = own.duet.baseURL;
    await page.goto(`${base}/?token=${own.duet.token}`);
    const res = await page.request.post(`${base}/api/sessions`, { data: { profile: 'writer' } });
    const { id } = (await res.json()) as { id: string };
    const total = readFileSync(history, 'utf8').split('\n').filter((l) => l !== '').length + readFileSync(tail, 'utf8').split('\n').filter((l) => l !== '').length;
    const lastSeq = async (): Promise<number> => ((await (await page.request.get(`${base}/api/sessions/${id}`)).json()) as { last_seq: number }).last_seq;
    await expect.poll(lastSeq).toBeGreaterThan(1000);
    // The agent streams the rest while the page opens the session.
    writeFileSync(go, '');
    await expect.poll(lastSeq).toBeGreaterThan(1000 + 20);
    await page.goto(`${base}/#/session/${encodeURIComponent(id)}`);
    await expect.poll(() => page.evaluate(() => window.duet?.state()?.lastSeq ?? 0), { timeout: 60_000 }).toBe(total);
    expect(await lastSeq()).toBe(total);

    // What the reducer makes of the server's events, one by one as the socket would bring them.
    const ndjson = await (await page.request.get(`${base}/api/sessions/${id}/events?times=true`)).text();
    let want = initialChatState;
    for (const line of ndjson.split('\n')) if (line !== '') want = reduce(want, JSON.parse(line) as ServerMessage);
    const shown = await page.evaluate(() => window.duet?.state());
    if (!shown) throw new Error('no chat state');
    expect(want.lastSeq).toBe(total);
    expect(transcript(shown)).toEqual(transcript(want));
    // And the log says so: its length is the transcript's.
    await expect(page.locator('.chat-log [data-kind]').last()).toHaveAttribute('aria-setsize', String(want.items.length));
  } finally {
    await page.context().close();
    await stopDuet(own.proc, own.duet.stateDir);
  }
});
