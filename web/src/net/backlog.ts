// A session's event history over HTTP, for the first connection of a page
// to a session that already has one. The WebSocket replays every event as a
// message of its own: 5,000 of them took ~300 ms to arrive (loopback, the
// page doing nothing else) where `GET /api/sessions/{id}/events?times=true`
// brings the same `event` messages, NDJSON, in ~25 ms. The server says how
// far the answer goes (`x-duet-last-seq`) before its body, so the socket can
// connect from there while the body arrives; the session holds the socket's
// events until these are applied (session.ts).
import type { ServerMessage } from '../generated/protocol';
import { apiUrl } from './api';
import { parseServerMessage } from './guards';

/** The history: how far it goes (known first) and its `event` messages (once the body is whole). */
export interface Backlog {
  readonly lastSeq: number;
  readonly events: Promise<ServerMessage[]>;
}

/**
 * Asks for session `id`'s events; undefined when they cannot be had this way
 * (an error, an older server without the header): the socket replays them.
 */
export async function fetchBacklog(id: string): Promise<Backlog | undefined> {
  let res: Response;
  try {
    res = await fetch(apiUrl(`api/sessions/${encodeURIComponent(id)}/events?times=true`), { credentials: 'same-origin', headers: { accept: 'application/x-ndjson' } });
  } catch {
    return undefined;
  }
  const header = res.headers.get('x-duet-last-seq');
  const lastSeq = header === null ? Number.NaN : Number(header);
  if (!res.ok || !Number.isSafeInteger(lastSeq) || lastSeq < 0) {
    void res.body?.cancel();
    return undefined;
  }
  return { lastSeq, events: res.text().then(parseEvents) };
}

/** The `event` messages of an NDJSON body, checked as the socket checks its frames; other lines are skipped. */
export function parseEvents(ndjson: string): ServerMessage[] {
  const out: ServerMessage[] = [];
  for (const line of ndjson.split('\n')) {
    if (line === '') continue;
    const m = parseServerMessage(line);
    if (m?.type === 'event') out.push(m);
  }
  return out;
}

/**
 * The socket's events while the history is on its way over HTTP: held, and
 * applied after it. Applied first, an event of the socket would make the
 * reducer skip the whole history as already seen (it dedupes by seq).
 */
export class HeldEvents {
  private held: ServerMessage[] | undefined;
  private generation = 0;
  /** Where the history ends: the socket connects from there while it is on its way. */
  private end = 0;

  /** The seq the socket resumes after, at the least: the history's end while it is on its way. */
  get upTo(): number {
    return this.held ? this.end : 0;
  }

  /** The history up to `upTo` is on its way; returns what `finish` takes. */
  begin(upTo: number): number {
    this.held = [];
    this.end = upTo;
    this.generation += 1;
    return this.generation;
  }

  /** Keeps `m` for later if it must wait (an event, or a warning, which may carry a seq); false when it need not. */
  hold(m: ServerMessage): boolean {
    if (!this.held || (m.type !== 'event' && m.type !== 'warning')) return false;
    this.held.push(m);
    return true;
  }

  /**
   * The history of `begin`'s `generation` arrived (or broke off): what was
   * held, to apply after it, and nothing is held from now on. Undefined when
   * that history no longer counts (cancelled, or begun again).
   */
  finish(generation: number): ServerMessage[] | undefined {
    if (generation !== this.generation || !this.held) return undefined;
    const held = this.held;
    this.held = undefined;
    return held;
  }

  /** Forgets the history on its way and what was held (the session went away, or the server is another run). */
  cancel(): void {
    this.held = undefined;
    this.generation += 1;
  }
}
