// The sessions sidebar: start a session from a profile, switch between
// sessions, see which wait for an approval, rename or end one, delete an
// ended one's transcript, go from a resumed one to where it goes on. It
// follows the live board (net/board.ts), in its order: what needs attention
// first; while the board's stream is down it says so rather than show
// what may no longer be true.
import type { ProfileInfo, SessionInfo } from '../generated/protocol';
import { h, svgIcon } from './dom';
import { renameForm, sessionLabel } from './rename';
import { latestResumption, ResumeControl } from './resume';

/** What the sidebar asks of the app. */
export interface SidebarOwner {
  open(id: string): void;
  start(profile: string | undefined): Promise<void>;
  end(id: string): Promise<void>;
  /** Delete an ended session's transcript (it leaves the list). */
  purge(id: string): Promise<void>;
  /** Resume an ended session; rejects with the reason (shown in its row). */
  resume(id: string): Promise<void>;
}

/** The sidebar. */
export class Sidebar {
  readonly root: HTMLElement;
  private readonly list: HTMLUListElement;
  private readonly endedList: HTMLUListElement;
  private readonly ended: HTMLDetailsElement;
  private readonly endedSummary: HTMLElement;
  private readonly profileSelect: HTMLSelectElement;
  private readonly startButton: HTMLButtonElement;
  private readonly error: HTMLElement;
  private sessions: SessionInfo[] = [];
  private currentId: string | undefined;
  /** The session whose End (or Delete) waits for the confirming click, until a click or key elsewhere. */
  private armed: string | undefined;
  private disarmListeners: (() => void) | undefined;
  /** The board's stream is down: the list may be out of date. */
  private offline = false;
  private signature = '';
  /** Live pending-approval counts for the open session (fresher than the poll). */
  private livePending = new Map<string, number>();
  /** Resume buttons of resumable sessions, kept across redraws (with their errors). */
  private resumeControls = new Map<string, ResumeControl>();
  /** The session being renamed and its form, kept across redraws. */
  private renaming: { id: string; form: HTMLFormElement } | undefined;

  constructor(private readonly owner: SidebarOwner) {
    this.profileSelect = h('select', { class: 'profile-select', 'aria-label': 'Profile' });
    this.startButton = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Start');
    this.error = h('p', { class: 'sidebar-error', role: 'alert', hidden: true });
    const form = h(
      'form',
      {
        class: 'new-session',
        onsubmit: (ev: Event) => {
          ev.preventDefault();
          void this.startSelected();
        },
      },
      h('label', { class: 'field-label' }, 'New session'),
      h('div', { class: 'new-session-row' }, this.profileSelect, this.startButton),
    );
    const heading = h('div', { class: 'sidebar-heading-row' }, h('h2', { class: 'sidebar-heading' }, 'Sessions'), h('a', { class: 'board-link', href: '#/board' }, 'Board'));
    this.list = h('ul', { class: 'session-list', 'aria-label': 'Running sessions' });
    this.endedList = h('ul', { class: 'session-list', 'aria-label': 'Ended sessions' });
    this.endedSummary = h('summary', { class: 'sidebar-heading' }, 'Ended');
    this.ended = h('details', { class: 'ended', hidden: true }, this.endedSummary, this.endedList);
    this.root = h('nav', { id: 'sidebar', class: 'sidebar', 'aria-label': 'Sessions' }, form, this.error, heading, this.list, this.ended);
  }

  /** Fills the profile picker. */
  setProfiles(profiles: ProfileInfo[]): void {
    this.profileSelect.replaceChildren(
      ...profiles.map((p) => h('option', { value: p.name, selected: p.default, title: p.description }, p.channel.events ? p.name : `${p.name} (terminal only)`)),
    );
    this.profileSelect.hidden = profiles.length <= 1;
    this.startButton.textContent = profiles.length <= 1 ? `Start ${profiles[0]?.name ?? 'session'}` : 'Start session';
  }

  /** The sessions, in the board's order (what needs attention first). */
  setSessions(sessions: SessionInfo[]): void {
    this.sessions = [...sessions];
    this.draw();
  }

  /** Which session is open. */
  setCurrent(id: string | undefined): void {
    this.currentId = id;
    this.draw();
  }

  /** The open session's own count of pending approvals. */
  setLivePending(id: string, n: number): void {
    if (this.livePending.get(id) === n) return;
    this.livePending.set(id, n);
    this.draw();
  }

  /** The board's stream is down (true) or back (false). */
  setOffline(offline: boolean): void {
    if (this.offline === offline) return;
    this.offline = offline;
    this.draw();
  }

  /** Shows (or clears) an error under the form. */
  showError(message: string | undefined): void {
    this.error.hidden = message === undefined;
    this.error.textContent = message ?? '';
  }

  /** The sessions from the last board. */
  get known(): readonly SessionInfo[] {
    return this.sessions;
  }

  private async startSelected(): Promise<void> {
    this.startButton.disabled = true;
    try {
      await this.owner.start(this.profileSelect.value || undefined);
    } finally {
      this.startButton.disabled = false;
    }
  }

  private draw(): void {
    // Redraw only on a visible change, so a poll does not steal keyboard focus.
    const sig = JSON.stringify([this.currentId, this.armed, this.offline, this.renaming?.id, [...this.livePending], this.sessions.map((s) => [s.id, s.name, s.prompt_name, s.status, s.pending_approvals, s.clients, s.title, s.resumable, s.resumed_from, s.resumed_by, s.exit])]);
    if (sig === this.signature) return;
    // Not under an open rename form: a redraw would take its focus away.
    if (this.renaming?.form.isConnected === true) return;
    this.signature = sig;
    // Keep the keyboard focus on the same button across the redraw.
    const active = document.activeElement;
    const row = active instanceof HTMLElement && this.root.contains(active) ? active.closest<HTMLElement>('.session-row') : null;
    const focusId = row?.dataset.sessionId;
    const focusEnd = active instanceof HTMLElement && active.classList.contains('session-end');
    const focusResume = active instanceof HTMLElement && active.classList.contains('resume');
    const focusRename = active instanceof HTMLElement && active.classList.contains('session-rename');
    for (const id of [...this.resumeControls.keys()]) {
      if (!this.sessions.some((s) => s.id === id && (s.resumable || s.resumed_by !== undefined))) this.resumeControls.delete(id);
    }

    // Running sessions first; ended ones (kept readable for a while) fold away.
    const running = this.sessions.filter((s) => s.status === 'running');
    const ended = this.sessions.filter((s) => s.status !== 'running');
    this.list.replaceChildren(...(running.length > 0 ? running.map((s) => this.row(s)) : [h('li', { class: 'session-empty' }, 'No running sessions.')]));
    this.endedList.replaceChildren(...ended.map((s) => this.row(s)));
    this.ended.hidden = ended.length === 0;
    this.endedSummary.textContent = `Ended (${ended.length})`;
    if (ended.some((s) => s.id === this.currentId)) this.ended.open = true;

    if (focusId !== undefined) {
      this.root.querySelector<HTMLElement>(`.session-row[data-session-id="${CSS.escape(focusId)}"] ${focusEnd ? '.session-end' : focusResume ? '.resume' : focusRename ? '.session-rename' : '.session-open'}`)?.focus();
    }
  }

  private row(s: SessionInfo): HTMLElement {
    const pending = s.id === this.currentId ? (this.livePending.get(s.id) ?? s.pending_approvals) : s.pending_approvals;
    const current = s.id === this.currentId;
    const label = sessionLabel(s);
    const armed = this.armed === s.id;
    const renaming = this.renaming?.id === s.id ? this.renaming.form : null;
    const shared = document.documentElement.dataset.shared === 'true';
    const ended = s.status !== 'running';
    const resumedBy = latestResumption(s.id, (id) => this.sessions.find((x) => x.id === id));
    const resume = s.resumable || resumedBy !== undefined ? this.resumeControl(s.id) : undefined;
    if (resume) {
      resume.visible = s.resumable;
      resume.resumedBy = resumedBy;
    }
    // Out of date while the stream is down: no "running · 1 connected" from before the outage.
    const meta = this.offline ? `${s.id.slice(0, 8)} · reconnecting…` : `${s.status} · ${s.id.slice(0, 8)}${s.clients > 0 ? ` · ${String(s.clients)} connected` : ''}`;
    return h(
      'li',
      { class: `session-row${current ? ' current' : ''}`, 'data-session-id': s.id },
      renaming ?? h(
        'button',
        { type: 'button', class: 'session-open', 'aria-current': current ? 'true' : undefined, onclick: () => { this.owner.open(s.id); } },
        h('span', { class: 'session-name' }, label),
        s.title !== undefined && s.title !== '' && s.title !== label && h('span', { class: 'session-meta session-title-meta' }, s.title),
        h('span', { class: 'session-meta' }, h('span', { class: `dot dot-${this.offline ? 'offline' : s.status}`, 'aria-hidden': 'true' }), meta),
        s.resumed_from !== undefined && h('span', { class: 'session-meta' }, `resumed from ${s.resumed_from.slice(0, 8)}`),
        pending > 0 && h('span', { class: 'badge badge-awaiting_approval session-badge', 'data-pending': pending }, `${pending} approval${pending === 1 ? '' : 's'}`),
      ),
      resume?.root,
      !shared && !renaming && h('button', { type: 'button', class: 'btn btn-quiet session-rename', 'aria-label': `Rename session ${label}`, title: 'Rename', onclick: () => { this.startRename(s); } }, '✎'),
      // Ending a session, and deleting an ended one's transcript, are the owner's; a share link cannot.
      !shared && h(
        'button',
        {
          type: 'button',
          class: `btn btn-quiet session-end${ended ? ' session-delete' : ''}${armed ? ' armed' : ''}`,
          'aria-label': ended
            ? (armed ? `Confirm: delete the transcript of session ${label}` : `Delete the transcript of session ${label}`)
            : (armed ? `Confirm: end session ${label}` : `End session ${label}`),
          title: ended
            ? (armed ? 'Click again to delete its transcript for good' : 'Delete this session’s transcript')
            : (armed ? 'Click again to end it' : 'End this session'),
          onclick: () => { this.onEnd(s.id, ended); },
        },
        armed ? (ended ? 'Delete?' : 'End?') : ended ? trashIcon() : '✕',
      ),
    );
  }

  private startRename(s: SessionInfo): void {
    const form = renameForm(s, (error) => {
      if (this.renaming?.form === form) this.renaming = undefined;
      this.showError(error === undefined ? undefined : `Could not rename: ${error}`);
      this.draw();
      this.root.querySelector<HTMLElement>(`.session-row[data-session-id="${CSS.escape(s.id)}"] .session-rename`)?.focus();
    });
    this.renaming = { id: s.id, form };
    this.draw();
  }

  private resumeControl(id: string): ResumeControl {
    let c = this.resumeControls.get(id);
    if (!c) {
      c = new ResumeControl(() => this.owner.resume(id));
      this.resumeControls.set(id, c);
    }
    return c;
  }

  private onEnd(id: string, ended: boolean): void {
    if (this.armed !== id) {
      // Two clicks: ending a session kills its program; deleting a
      // transcript cannot be undone. The question stays until answered, or
      // until a click or Escape elsewhere (it went in 3 s, before it was read).
      this.arm(id);
      return;
    }
    this.disarm();
    void (ended ? this.owner.purge(id) : this.owner.end(id));
  }

  private arm(id: string): void {
    this.disarm();
    this.armed = id;
    const away = (ev: Event): void => {
      if (ev instanceof KeyboardEvent) {
        if (ev.key !== 'Escape') return;
      } else if (ev.target instanceof Element && ev.target.closest('.session-end.armed')) {
        return;
      }
      this.disarm();
    };
    document.addEventListener('pointerdown', away, true);
    document.addEventListener('keydown', away, true);
    this.disarmListeners = () => {
      document.removeEventListener('pointerdown', away, true);
      document.removeEventListener('keydown', away, true);
    };
    this.draw();
  }

  private disarm(): void {
    this.disarmListeners?.();
    this.disarmListeners = undefined;
    if (this.armed === undefined) return;
    this.armed = undefined;
    this.draw();
  }
}

/** A waste bin, drawn inline (an emoji is a box where no emoji font is installed). */
function trashIcon(): SVGSVGElement {
  return svgIcon(['M3 6h18', 'M8 6V4h8v2', 'M6 6l1 14h10l1-14', 'M10 11v6', 'M14 11v6'],
    { viewBox: '0 0 24 24', width: '16', height: '16', fill: 'none', stroke: 'currentColor', 'stroke-width': '2', 'stroke-linecap': 'round', 'stroke-linejoin': 'round', 'aria-hidden': 'true' });
}
