// The board view (#/board): every session at a glance, in the live board's
// order (approvals waiting first, then running, then ended): its name, what
// it waits for (the tool and its input), how long its turn has run, when it
// last did something, who is watching, what it spent, and its budget (an
// owner raises a spent one here). The data comes from the server's stream
// (net/board.ts); a clock only refreshes the "… ago" texts. While the
// stream is down the board says so: what it shows may be old.
import type { Board, BoardEntry } from '../generated/protocol';
import { exitClause } from '../chat/exit';
import { presentTool, toolSummary } from '../chat/tools';
import { h, setHidden } from './dom';
import { renameForm, sessionLabel } from './rename';
import { budgetBlock } from './budget';
import { canManage } from './roles';
import { usageDetail, usageLine } from '../chat/usage';
import type { Role } from '../generated/protocol';

/** How often the relative times are redrawn while the board is shown. */
const CLOCK_MS = 5000;

/** "12 s", "3 min", "2 h 5 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hours = Math.floor(m / 60);
  return m % 60 === 0 ? `${hours} h` : `${hours} h ${m % 60} min`;
}

/**
 * A session whose agent has not sent its handshake yet (no event at all):
 * "starting", not "idle". Per-turn agents have no process between turns, and
 * a terminal-only program sends no events.
 */
function starting(s: BoardEntry['session']): boolean {
  return s.status === 'running' && s.channel.events && s.channel.kind !== 'stream_json_per_turn' && s.last_seq === 0;
}

/** What the board asks of the app. */
export interface BoardOwner {
  open(id: string, requestId?: string): void;
}

/** See the module comment. */
export class BoardView {
  readonly root: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly error: HTMLElement;
  private readonly offlineNote: HTMLElement;
  private board: Board = { sessions: [] };
  private clock: ReturnType<typeof setInterval> | undefined;
  private renaming: { id: string; form: HTMLFormElement } | undefined;

  constructor(private readonly owner: BoardOwner) {
    this.list = h('ol', { class: 'board-list', 'aria-label': 'Sessions, what needs attention first' });
    this.error = h('p', { class: 'sidebar-error', role: 'alert', hidden: true });
    this.offlineNote = h('p', { class: 'board-offline', role: 'status', hidden: true }, 'Reconnecting… what this shows may be out of date.');
    this.root = h('section', { class: 'board-view', hidden: true, 'aria-labelledby': 'board-heading' }, h('h1', { id: 'board-heading', class: 'board-heading' }, 'Board'), this.offlineNote, this.error, this.list);
  }

  /** The board's stream is down (true) or back. */
  setOffline(offline: boolean): void {
    // Said at every board message.
    setHidden(this.offlineNote, !offline);
  }

  /** Shows or hides the view; its clock runs only while shown. */
  show(visible: boolean): void {
    this.root.hidden = !visible;
    clearInterval(this.clock);
    if (visible) {
      this.draw();
      this.clock = setInterval(() => { this.draw(); }, CLOCK_MS);
    }
  }

  /** A new board from the stream. */
  set(board: Board): void {
    this.board = board;
    if (!this.root.hidden) this.draw();
  }

  private draw(): void {
    // Not under an open rename or budget form: a redraw would take its focus away.
    if (this.renaming?.form.isConnected === true) return;
    if (this.list.querySelector('.budget-form:not([hidden])')) return;
    if (this.board.sessions.length === 0) {
      this.list.replaceChildren(h('li', { class: 'session-empty' }, 'No sessions.'));
      return;
    }
    this.list.replaceChildren(...this.board.sessions.map((e) => this.card(e, Date.now())));
  }

  private card(e: BoardEntry, now: number): HTMLElement {
    const s = e.session;
    const label = sessionLabel(s);
    const waiting = e.pending.length > 0;
    const shared = document.documentElement.dataset.shared === 'true';
    const renaming = this.renaming?.id === s.id ? this.renaming.form : null;
    // By device: "owner, owner" told nothing.
    const viewers = [...new Set(s.connected.map((c) => c.device ?? c.name))];
    const state = waiting ? 'needs approval' : e.busy_since !== undefined ? 'working' : s.status !== 'running' ? 'ended' : starting(s) ? 'starting' : 'idle';
    return h(
      'li',
      { class: `board-card${waiting ? ' board-waiting' : ''}`, 'data-session-id': s.id, 'data-status': s.status },
      h(
        'div',
        { class: 'board-card-head' },
        renaming ?? h('button', { type: 'button', class: 'board-open', onclick: () => { this.owner.open(s.id); } }, label),
        h('span', { class: `badge ${waiting ? 'badge-awaiting_approval' : s.status === 'running' ? 'badge-running' : ''}`, 'data-state': state }, state),
        !shared && !renaming && h('button', { type: 'button', class: 'btn btn-quiet board-rename', 'aria-label': `Rename session ${label}`, onclick: () => { this.startRename(e); } }, 'Rename'),
      ),
      h('p', { class: 'board-meta' }, `${s.profile} · ${s.channel.kind} · ${s.id.slice(0, 8)}`, s.title !== undefined && s.title !== '' && s.title !== label ? ` · ${s.title}` : ''),
      ...e.pending.map((a) => {
        const summary = toolSummary(presentTool(a.input));
        return h('button', { type: 'button', class: 'board-approval', 'data-request-id': a.request_id, onclick: () => { this.owner.open(s.id, a.request_id); } }, h('strong', {}, a.tool_name), summary !== '' ? ` ${summary}` : '');
      }),
      h(
        'p',
        { class: 'board-meta' },
        s.status === 'exited' ? `${exitClause(s.exit)} · ` : '',
        e.busy_since !== undefined ? `working for ${duration(now - e.busy_since)} · ` : '',
        h('span', { class: 'board-activity' }, `active ${duration(now - e.last_activity)} ago`),
        viewers.length > 0 ? ` · watching: ${viewers.join(', ')}` : '',
      ),
      s.usage && h('p', { class: 'board-meta board-usage', title: usageDetail(s.usage) }, usageLine(s.usage)),
      s.budget && budgetBlock(s.id, s.budget, canManage(document.documentElement.dataset.role as Role | undefined), (error) => { this.budgetDone(error); }),
    );
  }

  private budgetDone(error: string | undefined): void {
    this.error.hidden = error === undefined;
    this.error.textContent = error === undefined ? '' : `Could not change the budget: ${error}`;
    this.draw();
  }

  private startRename(e: BoardEntry): void {
    const form = renameForm(e.session, (error) => {
      if (this.renaming?.form === form) this.renaming = undefined;
      this.error.hidden = error === undefined;
      this.error.textContent = error === undefined ? '' : `Could not rename: ${error}`;
      this.draw();
    });
    this.renaming = { id: e.session.id, form };
    this.draw();
  }
}
