// The chat log's entries as data for the windowed list (chat/entry-list.ts),
// in order: the earlier conversation (each session under its heading), the
// resumed-from note, the transcript, the prompts not in it yet, the exit
// note. An entry says when its element must be drawn again and builds it only
// when the list draws it (near the view), so a long log costs no DOM.
import type { ExitInfo } from '../generated/protocol';
import { canDrive } from '../ui/roles';
import { h } from '../ui/dom';
import type { ChatCallbacks, ChatContext } from './callbacks';
import { historyHeading, pendingEl, renderItem } from './entries';
import type { Entry } from './entry-list';
import { exitSentence, exitTone } from './exit';
import type { HistorySegment } from './history';
import { approvalOf, type ApprovalView, type ChatItem, type ChatState, type PendingSubmit } from './state';

/** What else an entry's element depends on besides its item: approvals possible, the program ended, the role, a spent budget. */
export function contextKey(state: ChatState, ctx: ChatContext): string {
  return `${String(ctx.channel?.approve ?? true)}|${String(state.exit !== null)}|${ctx.role ?? ''}|${ctx.budget?.exhausted ?? ''}`;
}

/**
 * The log's entries for a state and its context. An entry is made once per
 * item (and approval and context): a frame that changes one item of a long
 * log makes one entry, not one per item, so streaming into a long log does
 * not churn the heap.
 */
export class LogEntries {
  private readonly cache = new WeakMap<object, Entry>();

  /** `resumed` gives the resumed-from note's element. */
  constructor(private readonly cb: ChatCallbacks, private readonly resumed: (from: string) => HTMLElement) {}

  of(state: ChatState, ctx: ChatContext): Entry[] {
    const exited = state.exit !== null;
    const ctxKey = contextKey(state, ctx);
    const out: Entry[] = [];
    // No closure here over a loop's variables: each pass of such a loop would
    // allocate its scope, frame after frame, for every item of the log. The
    // builders are made (in `item` and the others) only for a new entry.
    for (const seg of ctx.history ?? []) {
      const key = `history:${seg.session}`;
      out.push(this.kept(seg, key, undefined, ctxKey) ?? this.heading(seg, key, ctxKey));
      for (const item of seg.state.items) {
        const approval = item.kind === 'tool' ? approvalOf(seg.state, item) : undefined;
        const k = `h:${seg.session}:${item.id}`;
        // The earlier conversation is read-only: nothing there waits for an answer.
        out.push(this.kept(item, k, approval, ctxKey) ?? this.item(k, item, approval, ctx, ctxKey, true));
      }
    }
    const from = ctx.resumedFrom;
    if (from !== undefined) out.push(this.resumedEntry(from, ctxKey));
    for (const item of state.items) {
      const approval = item.kind === 'tool' ? approvalOf(state, item) : undefined;
      out.push(this.kept(item, item.id, approval, ctxKey) ?? this.item(item.id, item, approval, ctx, ctxKey, exited));
    }
    for (const p of state.pending) {
      const key = `pending:${p.id}`;
      out.push(this.kept(p, key, undefined, ctxKey) ?? this.pending(key, p, ctx, ctxKey, exited));
    }
    const exit = state.exit;
    if (exit) out.push(this.kept(exit, 'exit', undefined, ctxKey) ?? this.remember({ key: 'exit', kind: 'exit', item: exit, approval: undefined, ctxKey, pinned: false, build: () => exitNote(exit) }));
    return out;
  }

  /** The entry made before for `item`, if it still holds. */
  private kept(item: object, key: string, approval: unknown, ctxKey: string): Entry | undefined {
    const e = this.cache.get(item);
    return e?.key === key && e.approval === approval && e.ctxKey === ctxKey ? e : undefined;
  }

  private remember(e: Entry): Entry {
    this.cache.set(e.item as object, e);
    return e;
  }

  private item(key: string, item: ChatItem, approval: ApprovalView | undefined, ctx: ChatContext, ctxKey: string, exited: boolean): Entry {
    const cb = this.cb;
    // A pending approval's card is always drawn: it is answered there, and jumped to.
    return this.remember({ key, kind: item.kind, item, approval, ctxKey, pinned: approval?.state === 'pending', build: (old) => renderItem(cb, item, approval, old, ctx, exited) });
  }

  private heading(seg: HistorySegment, key: string, ctxKey: string): Entry {
    return this.remember({ key, kind: 'heading', item: seg, approval: undefined, ctxKey, pinned: false, build: () => historyHeading(seg.session) });
  }

  private pending(key: string, p: PendingSubmit, ctx: ChatContext, ctxKey: string, exited: boolean): Entry {
    const cb = this.cb;
    const drives = canDrive(ctx.role);
    const spent = ctx.budget?.exhausted;
    return this.remember({ key, kind: 'pending', item: p, approval: undefined, ctxKey, pinned: false, build: () => pendingEl(cb, p, exited, drives, spent) });
  }

  private resumedEntry(from: string, ctxKey: string): Entry {
    return { key: 'resumed', kind: 'resumed', item: from, approval: undefined, ctxKey, pinned: false, build: () => this.resumed(from) };
  }
}

function exitNote(exit: ExitInfo): HTMLElement {
  return h('p', { class: `exit-note is-${exitTone(exit)}`, 'data-kind': 'exit', role: 'article' }, `${exitSentence(exit)}.`);
}
