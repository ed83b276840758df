// The earlier conversation of a resumed session, shown above its own chat.
// The server keeps it (GET /api/sessions/{id}/history, NDJSON: one
// `{session, seq, event}` per line, oldest first; a resumption of a
// resumption carries the whole chain), fixed once the session started, so a
// tab reads it once. Each earlier session becomes a read-only segment: its
// events replayed through the same reducer as a live chat, then closed, so a
// turn or an approval left open when it ended does not look alive.
import type { HistoryLine } from '../generated/protocol';
import { isObject } from './json';
import { endedStatus, initialChatState, reduce, type ChatState } from './state';

/** One earlier session's chat. */
export interface HistorySegment {
  readonly session: string;
  readonly state: ChatState;
}

function isHistoryLine(v: unknown): v is HistoryLine {
  return isObject(v) && typeof v.session === 'string' && typeof v.seq === 'number' && isObject(v.event);
}

/** The segments of an NDJSON history; lines that do not parse are skipped. */
export function historySegments(ndjson: string): HistorySegment[] {
  const segments: { session: string; state: ChatState }[] = [];
  for (const text of ndjson.split('\n')) {
    if (text.trim() === '') continue;
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      continue;
    }
    if (!isHistoryLine(line)) continue;
    let seg = segments[segments.length - 1];
    if (seg?.session !== line.session) {
      seg = { session: line.session, state: initialChatState };
      segments.push(seg);
    }
    seg.state = reduce(seg.state, { type: 'event', seq: line.seq, event: line.event });
  }
  return segments.map((s) => ({ session: s.session, state: closed(s.state) }));
}

/** An ended session's state: nothing streams or waits any more. */
function closed(state: ChatState): ChatState {
  const approvals = Object.fromEntries(Object.entries(state.approvals).map(([k, a]) => [k, a.state === 'pending' ? { ...a, state: 'abandoned' as const } : a]));
  const items = state.items.map((i) => {
    if ((i.kind === 'assistant' || i.kind === 'thinking') && i.streaming) return { ...i, streaming: false };
    if (i.kind === 'tool') return { ...i, status: endedStatus(i.status) };
    return i;
  });
  return { ...state, items, approvals, stream: null, awaitingReply: false };
}
