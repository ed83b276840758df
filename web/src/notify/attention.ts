// What on the board needs its user, as notifications: an approval waiting
// (with the tool and its input), a turn that finished after running longer
// than the user's threshold, a program that exited (with its status). Pure:
// it compares two boards, so it is unit-tested without a browser.
import type { Board, BoardEntry } from '../generated/protocol';
import type { NotifyItem } from '../sw/messages';
import { exitClause } from '../chat/exit';
import { presentTool, toolSummary } from '../chat/tools';
import { sessionLabel } from '../ui/rename';
import { duration } from '../ui/board';

/** The notification tag of an approval (a decision anywhere closes it by this tag). */
export function approvalTag(sessionId: string, requestId: string): string {
  return `duet-approval-${sessionId}-${requestId}`;
}

/** The app's address of a session, at an approval when given. */
export function sessionUrl(sessionId: string, requestId?: string): string {
  const base = `./#/session/${encodeURIComponent(sessionId)}`;
  return requestId === undefined ? base : `${base}/approval/${encodeURIComponent(requestId)}`;
}

/** Notifications to show and tags to close, going from `prev` to `next`. */
export interface AttentionChange {
  readonly show: NotifyItem[];
  readonly close: string[];
}

function approvals(e: BoardEntry): NotifyItem[] {
  return e.pending.map((a) => {
    const summary = toolSummary(presentTool(a.input));
    return {
      tag: approvalTag(e.session.id, a.request_id),
      title: `${sessionLabel(e.session)}: allow ${a.tool_name}?`,
      body: summary !== '' ? summary : JSON.stringify(a.input).slice(0, 200),
      url: sessionUrl(e.session.id, a.request_id),
    };
  });
}

/**
 * What changed between two boards (`prev` null: the first board, which
 * only sets the baseline). `longTurnMs`: a finished turn notifies when it ran
 * at least this long; `now` is when `next` arrived.
 */
export function attention(prev: Board | null, next: Board, longTurnMs: number, now: number): AttentionChange {
  const show: NotifyItem[] = [];
  const close: string[] = [];
  if (prev === null) return { show, close };
  const before = new Map(prev.sessions.map((e) => [e.session.id, e]));
  const nextTags = new Set(next.sessions.flatMap((e) => approvals(e).map((i) => i.tag)));
  for (const e of prev.sessions) for (const i of approvals(e)) if (!nextTags.has(i.tag)) close.push(i.tag);
  for (const e of next.sessions) {
    const old = before.get(e.session.id);
    const shown = new Set(old ? approvals(old).map((i) => i.tag) : []);
    show.push(...approvals(e).filter((i) => !shown.has(i.tag)));
    if (!old) continue;
    const label = sessionLabel(e.session);
    if (old.busy_since !== undefined && e.busy_since !== old.busy_since && e.session.status === 'running') {
      const took = now - old.busy_since;
      if (took >= longTurnMs) {
        show.push({ tag: `duet-turn-${e.session.id}`, title: `${label}: turn finished`, body: `The agent finished after ${duration(took)}.`, url: sessionUrl(e.session.id) });
      }
    }
    if (old.session.status === 'running' && e.session.status === 'exited') {
      const x = e.session.exit;
      const how = exitClause(x);
      show.push({ tag: `duet-exit-${e.session.id}`, title: `${label} ${x?.success === true ? 'finished' : 'stopped'}`, body: `The program ${how}.`, url: sessionUrl(e.session.id) });
    }
  }
  return { show, close };
}
