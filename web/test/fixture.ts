// Loads the recorded Qwen Code 0.15.10 sidecar stream (the copy in
// protocol/tests/fixtures) as the `event` messages duet would relay, seq =
// line number.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hello, ServerMessage, SidecarEvent } from '../src/generated/protocol';

const webRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the fixtures live: `DUET_FIXTURES`, else `protocol/tests/fixtures` in the repo. */
export const fixturesDir = process.env.DUET_FIXTURES ?? resolve(webRoot, '../protocol/tests/fixtures');

/** An `event` message as the server sends it. */
export type EventMessage = Extract<ServerMessage, { type: 'event' }>;

/** The fixture's lines as `event` messages. Throws a clear error when the file is missing. */
export function loadQwenEvents(): EventMessage[] {
  const path = resolve(fixturesDir, 'qwen-code-0.15.10/events.jsonl');
  if (!existsSync(path)) {
    throw new Error(
      `fixture missing: ${path}\n` +
        'The chat-state tests replay a real Qwen Code stream kept in protocol/tests/fixtures; ' +
        'point DUET_FIXTURES at another fixtures folder to use that one.',
    );
  }
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line, i) => ({ type: 'event', seq: i + 1, event: JSON.parse(line) as SidecarEvent }));
}

/** The seq of the first event matching `pred`. */
export function seqOf(events: EventMessage[], pred: (e: SidecarEvent) => boolean): number {
  const found = events.find((m) => pred(m.event));
  if (!found) throw new Error('no such event in the fixture');
  return found.seq;
}

/** A `hello` of a running session, with `fields` over the defaults. */
export function hello(fields: Partial<Hello> = {}): ServerMessage {
  return {
    type: 'hello',
    session_id: 's1',
    client_id: 2,
    role: 'owner',
    principal: 'owner',
    clients: [],
    protocol_version: 1,
    server_version: 'test',
    capabilities: [],
    profile: 'qwen',
    channel: { kind: 'dual_output', events: true, submit: true, approve: true },
    status: 'running',
    cols: 80,
    rows: 24,
    last_seq: 0,
    approvals: [],
    unsent: [],
    held: [],
    ...fields,
  };
}
