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
import { approvalOf, type ChatState } from './state';

/** What else an entry's element depends on besides its item: approvals possible, the program ended, the role, a spent budget. */
export function contextKey(state: ChatState, ctx: ChatContext): string {
  return `${String(ctx.channel?.approve ?? true)}|${String(state.exit !== null)}|${ctx.role ?? ''}|${ctx.budget?.exhausted ?? ''}`;
}

/** The log's entries for `state` in `ctx`; `resumed` gives the resumed-from note's element. */
export function logEntries(state: ChatState, ctx: ChatContext, cb: ChatCallbacks, resumed: (from: string) => HTMLElement): Entry[] {
  const exited = state.exit !== null;
  const ctxKey = contextKey(state, ctx);
  const out: Entry[] = [];
  const plain = (key: string, kind: string, item: unknown, build: () => HTMLElement): void => {
    out.push({ key, kind, item, approval: undefined, ctxKey, pinned: false, build });
  };
  // The earlier conversation first, read-only: nothing there waits for an answer.
  for (const seg of ctx.history ?? []) {
    plain(`history:${seg.session}`, 'heading', seg, () => historyHeading(seg.session));
    for (const item of seg.state.items) {
      const approval = item.kind === 'tool' ? approvalOf(seg.state, item) : undefined;
      out.push({ key: `h:${seg.session}:${item.id}`, kind: item.kind, item, approval, ctxKey, pinned: false, build: (old) => renderItem(cb, item, approval, old, ctx, true) });
    }
  }
  const from = ctx.resumedFrom;
  if (from !== undefined) plain('resumed', 'resumed', from, () => resumed(from));
  for (const item of state.items) {
    const approval = item.kind === 'tool' ? approvalOf(state, item) : undefined;
    // A pending approval's card is always drawn: it is answered there, and jumped to.
    out.push({ key: item.id, kind: item.kind, item, approval, ctxKey, pinned: approval?.state === 'pending', build: (old) => renderItem(cb, item, approval, old, ctx, exited) });
  }
  const drives = canDrive(ctx.role);
  const spent = ctx.budget?.exhausted;
  for (const p of state.pending) plain(`pending:${p.id}`, 'pending', p, () => pendingEl(cb, p, exited, drives, spent));
  const exit = state.exit;
  if (exit) plain('exit', 'exit', exit, () => exitNote(exit));
  return out;
}

function exitNote(exit: ExitInfo): HTMLElement {
  return h('p', { class: `exit-note is-${exitTone(exit)}`, 'data-kind': 'exit', role: 'article' }, `${exitSentence(exit)}.`);
}
