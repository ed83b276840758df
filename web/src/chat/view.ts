// The chat pane: status line, transcript, composer. It renders a ChatState and
// reports user intents (submit, approve, cancel) through callbacks; it owns no
// conversation state of its own. The transcript is a windowed list
// (chat/entry-list.ts): every entry is data (chat/log-entries.ts), only those
// near the view have elements, rebuilt only when their object (or their
// approval's) changed. While a reply streams only its text changes
// (`stream.live`): a frame then appends the new characters to one text node
// per open block and walks nothing else, O(1) in the transcript's length; the
// block's markdown is rendered once, when the block ends.
import { canApprove, canDrive } from '../ui/roles';
import { h } from '../ui/dom';
import { budgetLine, usageDetail, usageLine } from './usage';
import { ResumeControl } from '../ui/resume';
import { Announcer } from './announce';
import type { ChatCallbacks, ChatContext } from './callbacks';
import { EntryList } from './entry-list';
import { exitStatus, exitTone } from './exit';
import { tooLongToSend } from './limits';
import { contextKey, LogEntries } from './log-entries';
import { prepareMarkdown } from './markdown';
import { agentModels, ModePicker } from './modes';
import { chatStatus, type ChatState, type ChatStatus } from './state';

// The view's API stays here for its importers (the session, the replay view).
export type { ApprovalChoice, ChatCallbacks, ChatContext } from './callbacks';
export { outcomeText } from './approval-card';
export { exitSentence } from './exit';

const STATUS_TEXT: Record<ChatStatus, string> = {
  idle: 'Idle',
  thinking: 'Thinking…',
  responding: 'Responding…',
  running_tool: 'Running a tool…',
  awaiting_approval: 'Waiting for your approval',
  approval_sent: 'Answer sent — waiting for the agent…',
  exited: 'Exited',
};

/** What the status line shows besides the chat's own status: the connection, and an agent not up yet. */
type ShownStatus = ChatStatus | 'starting' | 'reconnecting';

/** An agent that has not sent its handshake (`session_start`) yet is still starting; per-turn agents run only during a turn. */
function starting(state: ChatState, ctx: ChatContext): boolean {
  const ch = ctx.channel;
  return state.agent === null && state.items.length === 0 && ch !== undefined && ch.events && ch.kind !== 'stream_json_per_turn';
}

/** The chat pane. */
export class ChatView {
  /** The pane's root element. */
  readonly root: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly statusText: HTMLElement;
  private readonly log: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly resumedNote: HTMLElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly modes: ModePicker;
  private readonly models: ModePicker;
  private readonly composerNote: HTMLElement;
  /** Why the text in the box was not sent (too long); cleared by the next edit. */
  private readonly composerError: HTMLElement;
  private readonly composer: HTMLFormElement;
  private readonly resume: ResumeControl;
  /** The transcript's entries; only those near the view are drawn. */
  private readonly list: EntryList;
  private readonly announcer = new Announcer();
  private readonly entries: LogEntries;
  /** The state last drawn (entries drawn on a scroll take their streamed text from it). */
  private lastState: ChatState | undefined;
  private prepared = false;
  private lastStatus: ChatStatus | undefined;
  private lastEmpty = '';
  /** What the last full render drew from (a frame with the same inputs only updates live text). */
  private lastDrawn: { items: ChatState['items']; approvals: ChatState['approvals']; pending: ChatState['pending']; exit: ChatState['exit']; ctxKey: string; history: ChatContext['history']; resumedFrom: string | undefined } | undefined;
  private lastPlaceholder = '';
  /** The "approval waiting" control, shown while a pending approval is out of view. */
  private readonly jumpButton: HTMLButtonElement;
  private readonly statusJump: HTMLButtonElement;
  /** What the agent spent, and why prompts wait once a budget is spent. */
  private readonly statusUsage: HTMLElement;

  constructor(private readonly cb: ChatCallbacks) {
    this.statusText = h('span', { class: 'status-text' }, 'Connecting…');
    // While an approval waits, the status line is a link to it.
    this.statusJump = h('button', { type: 'button', class: 'linkish status-jump', hidden: true, onclick: () => { this.jumpToApproval(); } }, STATUS_TEXT.awaiting_approval);
    this.stopButton = h('button', { type: 'button', class: 'btn btn-quiet stop', hidden: true, title: 'Interrupt (Escape)', onclick: () => { cb.onCancel(); } }, 'Stop');
    this.resume = new ResumeControl(() => cb.onResume());
    this.resume.visible = false;
    this.modes = new ModePicker((mode) => cb.onSetMode(mode));
    this.statusUsage = h('span', { class: 'status-usage', hidden: true });
    this.models = new ModePicker((model) => cb.onSetModel(model), 'Model');
    this.statusEl = h('div', { class: 'chat-status', role: 'status', 'aria-live': 'polite', 'data-status': 'idle' }, h('span', { class: 'status-dot', 'aria-hidden': 'true' }), this.statusText, this.statusJump, this.statusUsage, this.stopButton, this.modes.root, this.models.root, this.resume.root);
    this.empty = h('p', { class: 'chat-empty' }, 'No messages yet. Type a prompt below, or in the terminal.');
    // Placed by `render` below the earlier conversation, above this session's own.
    this.resumedNote = h('p', { class: 'resumed-note', role: 'article' });
    // A feed: its entries (articles, each with its place in the whole log) come and go as the reader scrolls.
    this.log = h('div', { class: 'chat-log', role: 'feed', 'aria-label': 'Conversation', tabindex: 0 });
    this.list = new EntryList(this.log, () => { this.afterList(); });
    this.entries = new LogEntries(cb, (from) => {
      this.renderResumed(from);
      return this.resumedNote;
    });
    this.jumpButton = h('button', { type: 'button', class: 'btn approval-jump', hidden: true, onclick: () => { this.jumpToApproval(); } }, h('span', { class: 'status-dot', 'aria-hidden': 'true' }), 'Approval waiting ', h('span', { 'aria-hidden': 'true' }, '↓'));
    this.input = h('textarea', {
      class: 'composer-input',
      rows: 1,
      placeholder: 'Message the agent…',
      title: 'Enter sends; Shift+Enter starts a new line',
      'aria-label': 'Message',
      'aria-describedby': 'composer-note composer-error',
      enterkeyhint: 'send',
      onkeydown: (ev: Event) => { this.onKey(ev as KeyboardEvent); },
      oninput: () => { this.autosize(); this.keepDraft(); this.showComposerError(undefined); },
    });
    this.input.value = readDraft(cb.draftKey);
    this.sendButton = h('button', { type: 'submit', class: 'btn btn-primary send' }, 'Send');
    this.composerNote = h('p', { id: 'composer-note', class: 'composer-note', hidden: true });
    this.composerError = h('p', { id: 'composer-error', class: 'composer-error', role: 'alert', hidden: true });
    const form = h('form', { class: 'composer', onsubmit: (ev: Event) => { ev.preventDefault(); this.send(); } }, this.composerNote, this.composerError, this.input, this.sendButton);
    this.composer = form;
    this.root = h('section', { class: 'pane chat-pane', 'aria-label': 'Chat' }, this.statusEl, h('div', { class: 'chat-log-wrap' }, this.empty, this.log, this.jumpButton, this.announcer.root), form);
  }

  /** The reader is following the conversation (not scrolled up). */
  get following(): boolean {
    return this.list.following;
  }

  /**
   * Scrolls a pending approval (`requestId`'s, else the first) into view and
   * gives it the keyboard; false when there is no such card (yet).
   */
  jumpToApproval(requestId?: string): boolean {
    const card = this.pendingApprovals().find((c) => requestId === undefined || c.dataset.requestId === requestId);
    if (!card) return false;
    // Focus first: a focused card shows its key hint (`:focus-within`), one
    // line taller, and the scroll must place the card at its final height.
    card.focus({ preventScroll: true });
    this.list.reveal(card);
    this.updateJump();
    return true;
  }

  /** Pending approvals' cards: always drawn (their entries are pinned in the list). */
  private pendingApprovals(): HTMLElement[] {
    return [...this.log.querySelectorAll<HTMLElement>('.approval[data-approval-state]')];
  }

  /** The list drew or scrolled: entries drawn just now take their streamed text, and the jump control is checked. */
  private afterList(): void {
    if (this.lastState) this.updateLive(this.lastState);
    this.checkJump();
  }

  private checkJump(): void {
    // No approval pending: no need to look for cards in the DOM.
    if (this.jumpButton.hidden && !Object.values(this.lastState?.approvals ?? {}).some((a) => a.state === 'pending')) return;
    this.updateJump();
  }

  /** Shows the jump control while a pending approval is (partly) outside the log's view. */
  private updateJump(): void {
    const cards = this.pendingApprovals();
    let outside = false;
    if (cards.length > 0 && this.log.clientHeight > 0) {
      const view = this.log.getBoundingClientRect();
      outside = cards.some((c) => {
        const r = c.getBoundingClientRect();
        return r.top < view.top - 1 || r.bottom > view.bottom + 1;
      });
    }
    if (this.jumpButton.hidden === outside) this.jumpButton.hidden = !outside;
  }

  /** Readies what drawing the first entries needs (the markdown renderer), while a long history arrives. */
  prepare(): void {
    if (this.prepared) return;
    this.prepared = true;
    prepareMarkdown();
  }

  /** Moves the keyboard focus to the composer; false when it cannot take it (hidden, disabled). */
  focusComposer(): boolean {
    this.input.focus();
    return document.activeElement === this.input;
  }

  /** Draws `state`. Cheap when little changed. */
  render(state: ChatState, ctx: ChatContext): void {
    this.renderStatus(state, ctx);
    const ctxKey = contextKey(state, ctx);
    const last = this.lastDrawn;
    this.lastDrawn = { items: state.items, approvals: state.approvals, pending: state.pending, exit: state.exit, ctxKey, history: ctx.history, resumedFrom: ctx.resumedFrom };
    this.lastState = state;
    // The earlier conversation and the resumed-from note come with the context, later than the state.
    if (last?.items === state.items && last.approvals === state.approvals && last.pending === state.pending && last.exit === state.exit && last.ctxKey === ctxKey && last.history === ctx.history && last.resumedFrom === ctx.resumedFrom) {
      // Only streamed text (or the status) changed: no walk over the transcript.
      this.updateLive(state);
      this.list.keepBottom();
      this.checkJump();
      return;
    }
    const entries = this.entries.of(state, ctx);
    this.empty.hidden = entries.length > 0;
    // Calls afterList: the live text, the jump control.
    this.list.set(entries);
    this.announcer.update(state, ctx.replay === true);
  }

  /** Appends what streamed since the last frame to each open block's live text node. */
  private updateLive(state: ChatState): void {
    for (const [id, text] of Object.entries(state.stream?.live ?? {})) {
      const target = this.list.element(id)?.querySelector('[data-live]');
      if (!target) continue;
      let node = target.firstChild;
      if (!(node instanceof Text)) node = target.appendChild(document.createTextNode(''));
      const shown = node as Text;
      // Live text only grows until its block commits (then the item is redrawn).
      if (text.length > shown.length) shown.appendData(text.slice(shown.length));
      else if (text.length < shown.length) shown.data = text;
    }
  }

  private renderResumed(from: string): void {
    if (this.resumedNote.dataset.from === from) return;
    this.resumedNote.dataset.from = from;
    this.resumedNote.replaceChildren('Resumed from an earlier session (', h('a', { href: `#/session/${encodeURIComponent(from)}` }, from.slice(0, 8)), ').');
  }

  private renderStatus(state: ChatState, ctx: ChatContext): void {
    const status = chatStatus(state);
    let shown: ShownStatus = status;
    let text = STATUS_TEXT[status];
    if (status === 'exited' && state.exit) {
      text = exitStatus(state.exit);
    } else if (ctx.reconnecting === true) {
      // What the line said before the drop may no longer be so.
      shown = 'reconnecting';
      text = 'Reconnecting…';
    } else if (status === 'idle' && starting(state, ctx) && ctx.replay !== true) {
      shown = 'starting';
      text = 'Starting…';
    }
    const events = ctx.channel?.events ?? true;
    if (!events) text = 'This program has no chat view; use the terminal.';
    if (this.statusText.textContent !== text) this.statusText.textContent = text;
    const empty = ctx.replay === true ? 'Nothing was said yet at this point of the recording.' : canDrive(ctx.role) ? 'No messages yet. Type a prompt below, or in the terminal.' : 'No messages yet.';
    if (empty !== this.lastEmpty) {
      this.empty.textContent = empty;
      this.lastEmpty = empty;
    }
    const link = status === 'awaiting_approval' && events;
    // Only a role that may answer is waited on.
    const waiting = canApprove(ctx.role) ? STATUS_TEXT.awaiting_approval : 'Waiting for an approval';
    if (link && this.statusJump.textContent !== waiting) this.statusJump.textContent = waiting;
    this.statusText.hidden = link;
    this.statusJump.hidden = !link;
    this.statusEl.dataset.status = shown;
    if (state.exit) this.statusEl.dataset.tone = exitTone(state.exit);
    else delete this.statusEl.dataset.tone;
    this.renderUsage(ctx);
    this.stopButton.hidden = !canDrive(ctx.role) || !(status === 'thinking' || status === 'responding' || status === 'running_tool');
    // No prompt box for roles that cannot send prompts (viewer, approver), nor in a replay.
    this.composer.hidden = !canDrive(ctx.role) || ctx.replay === true;
    this.modes.update(state.exit ? undefined : (state.modes ?? undefined), canDrive(ctx.role));
    this.models.update(state.exit ? undefined : agentModels(state.agent), canDrive(ctx.role));
    this.resume.visible = status === 'exited' && ctx.resumable;
    this.resume.resumedBy = ctx.resumedBy;
    this.log.setAttribute('aria-busy', String(status === 'responding'));

    // The composer: why it cannot be used, when it cannot.
    const ended = status === 'exited';
    const canSubmit = ctx.channel?.submit ?? true;
    let note: string | undefined;
    let placeholder = 'Message the agent…';
    if (ended) {
      placeholder = 'The program has exited.';
    } else if (!events) {
      placeholder = 'No chat for this program.';
    } else if (!canSubmit) {
      placeholder = 'Type prompts in the terminal.';
      const via = ctx.channel?.kind === 'claude_hooks' ? ' (through Claude Code’s hooks)' : '';
      note = `This agent reports to the chat${via} but cannot take prompts from the chat. Type in the terminal; your prompt and the reply will show here.`;
    }
    const disabled = ended || !events || !canSubmit;
    this.input.disabled = disabled;
    this.sendButton.disabled = disabled;
    if (placeholder !== this.lastPlaceholder) {
      this.input.placeholder = placeholder;
      this.lastPlaceholder = placeholder;
    }
    this.composerNote.hidden = note === undefined;
    if (this.composerNote.textContent !== (note ?? '')) this.composerNote.textContent = note ?? '';
    this.lastStatus = status;
  }

  private renderUsage(ctx: ChatContext): void {
    const spent = budgetLine(ctx.budget);
    const text = spent !== '' ? spent : usageLine(ctx.usage);
    if (this.statusUsage.textContent !== text) this.statusUsage.textContent = text;
    const detail = usageDetail(ctx.usage);
    if (this.statusUsage.title !== detail) this.statusUsage.title = detail;
    this.statusUsage.hidden = text === '';
    this.statusUsage.classList.toggle('budget-spent', spent !== '');
  }

  private onKey(ev: KeyboardEvent): void {
    // Escape interrupts the agent, as it would in the terminal.
    if (ev.key === 'Escape' && (this.lastStatus === 'thinking' || this.lastStatus === 'responding' || this.lastStatus === 'running_tool')) {
      ev.preventDefault();
      this.cb.onCancel();
      return;
    }
    // Enter sends; Shift+Enter (or an IME composition) inserts a newline.
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing && !ev.altKey && !ev.ctrlKey && !ev.metaKey) {
      ev.preventDefault();
      this.send();
    }
  }

  /**
   * Puts a prompt the server refused back into the box, ahead of anything
   * typed since, so that no typed text is lost (the log says why).
   */
  restoreDraft(text: string): void {
    const now = this.input.value;
    if (now === text) return;
    this.input.value = now === '' ? text : `${text}\n${now}`;
    this.autosize();
    this.keepDraft();
  }

  private showComposerError(message: string | undefined): void {
    if (this.composerError.hidden && message === undefined) return;
    this.composerError.hidden = message === undefined;
    this.composerError.textContent = message ?? '';
  }

  private send(): void {
    const text = this.input.value;
    if (text.trim() === '' || this.input.disabled) return;
    // Checked here: the server would refuse it after the box was cleared.
    const tooLong = tooLongToSend(text);
    this.showComposerError(tooLong);
    if (tooLong !== undefined) return;
    if (this.cb.onSubmit(text)) {
      this.input.value = '';
      this.autosize();
      this.keepDraft();
    }
  }

  /** Keeps the box's text across a reload of this tab (sessionStorage; full or off: not kept). */
  private keepDraft(): void {
    const key = this.cb.draftKey;
    if (key === undefined) return;
    try {
      if (this.input.value === '') sessionStorage.removeItem(key);
      else sessionStorage.setItem(key, this.input.value);
    } catch { /* not kept */ }
  }

  private autosize(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 200)}px`;
  }
}

/** The unsent text a reload left behind. */
function readDraft(key: string | undefined): string {
  if (key === undefined) return '';
  try { return sessionStorage.getItem(key) ?? ''; } catch { return ''; }
}
