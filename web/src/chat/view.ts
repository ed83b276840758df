// The chat pane: status line, transcript, composer. It renders a ChatState and
// reports user intents (submit, approve, cancel) through callbacks; it owns no
// conversation state of its own. Items are keyed by id and rebuilt only when
// their object (or their approval's) changed. While a reply streams only its
// text changes (`stream.live`): a frame then appends the new characters to one
// text node per open block and walks nothing else, O(1) in the transcript's
// length; the block's markdown is rendered once, when the block ends.
import type { ApprovalOption, ApprovalOptionKind, ChannelInfo, ExitInfo, Role } from '../generated/protocol';
import { canApprove, canDrive } from '../ui/roles';
import { h } from '../ui/dom';
import { ResumeControl } from '../ui/resume';
import { diffLines } from './diff';
import { agentModes, ModePicker } from './modes';
import type { HistorySegment } from './history';
import { renderMarkdown } from './markdown';
import { resultText } from './sidecar';
import {
  approvalOf,
  chatStatus,
  chosenOption,
  isSentUnconfirmed,
  optionAllows,
  type ApprovalView,
  type ChatItem,
  type ChatState,
  type ChatStatus,
  type PendingSubmit,
  type ToolItem,
  type ToolStatus,
  type UserItem,
} from './state';
import { approvalQuestion, presentTool, toolSummary } from './tools';

/** An answer to a tool approval: one of the agent's options, or plain yes/no when it offered none. */
export type ApprovalChoice = { readonly option: string } | { readonly allowed: boolean };

/** What the chat asks its owner to do. */
export interface ChatCallbacks {
  /** Send a prompt; false when it could not be sent (the text stays in the box). */
  onSubmit(text: string): boolean;
  onApprove(requestId: string, choice: ApprovalChoice): void;
  /** Interrupt the program (Escape into the terminal). */
  onCancel(): void;
  /** Show the terminal and give it the keyboard (a slash command's output is there). */
  onShowTerminal(): void;
  /** Resume the ended conversation in a new session; rejects with the reason. */
  onResume(): Promise<void>;
  /** Forget a prompt that was not sent. */
  onDiscard(pendingId: string): void;
  /** Switch the agent to one of its modes; rejects with the reason. */
  onSetMode(mode: string): Promise<void>;
}

/** Extra facts the view needs besides the chat state. */
export interface ChatContext {
  /** The session's side channel; undefined until the server said. */
  readonly channel: ChannelInfo | undefined;
  /** The socket is open (the composer still works through REST when it is not). */
  readonly connected: boolean;
  /** The session ended and the agent can pick its conversation up again. */
  readonly resumable: boolean;
  /** The ended session this one resumed, if it is a resumption. */
  readonly resumedFrom?: string | undefined;
  /** The earlier conversation (the chain of sessions this one resumed), shown above its own. */
  readonly history?: readonly HistorySegment[] | undefined;
  /** This client's role (undefined until the hello: assume all). */
  readonly role?: Role | undefined;
}

interface Rendered {
  el: HTMLElement;
  item: ChatItem | PendingSubmit | ExitInfo | HistorySegment | string;
  approval: ApprovalView | undefined;
  /** What else the element depends on (approvals possible, program ended). */
  ctxKey: string;
}

/** One button of an approval card. */
interface Choice {
  readonly label: string;
  readonly kind: ApprovalOptionKind;
  readonly choice: ApprovalChoice;
}

const STATUS_TEXT: Record<ChatStatus, string> = {
  idle: 'Idle',
  thinking: 'Thinking…',
  responding: 'Responding…',
  running_tool: 'Running a tool…',
  awaiting_approval: 'Waiting for your approval',
  approval_sent: 'Answer sent — waiting for the agent…',
  exited: 'Exited',
};

const TOOL_STATUS_TEXT: Record<ToolStatus, string> = {
  streaming: 'preparing',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  sent: 'answer sent',
  done: 'done',
  error: 'error',
  denied: 'denied',
  abandoned: 'abandoned',
};

const PENDING_NOTE: Record<PendingSubmit['state'], string> = {
  sending: 'sending…',
  queued: 'queued until the agent is ready',
  unconfirmed: 'not confirmed: the connection dropped. If it does not appear, send it again.',
  failed: 'not sent',
};

/** Results longer than this are cut in the card (the terminal has them whole). */
const MAX_RESULT_CHARS = 20_000;
/** Diff lines shown before "… N more lines". */
const MAX_DIFF_LINES = 400;

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
  private readonly composerNote: HTMLElement;
  private readonly composer: HTMLFormElement;
  private readonly resume: ResumeControl;
  private readonly rendered = new Map<string, Rendered>();
  private lastStatus: ChatStatus | undefined;
  /** What the last full render drew from (a frame with the same inputs only updates live text). */
  private lastDrawn: { items: ChatState['items']; approvals: ChatState['approvals']; pending: ChatState['pending']; exit: ChatState['exit']; ctxKey: string; history: ChatContext['history']; resumedFrom: string | undefined } | undefined;
  private lastPlaceholder = '';
  /** Follow new content: true unless the reader scrolled up. */
  private follow = true;
  /** The scrollTop we set ourselves (its scroll event is not the reader's). */
  private autoScrollTop = -1;
  /** The "approval waiting" control, shown while a pending approval is out of view. */
  private readonly jumpButton: HTMLButtonElement;
  private readonly statusJump: HTMLButtonElement;
  private readonly resizeObserver: ResizeObserver | undefined;

  constructor(private readonly cb: ChatCallbacks) {
    this.statusText = h('span', { class: 'status-text' }, 'Connecting…');
    // While an approval waits, the status line is a link to it.
    this.statusJump = h('button', { type: 'button', class: 'linkish status-jump', hidden: true, onclick: () => { this.jumpToApproval(); } }, STATUS_TEXT.awaiting_approval);
    this.stopButton = h('button', { type: 'button', class: 'btn btn-quiet stop', hidden: true, title: 'Interrupt (Escape)', onclick: () => { cb.onCancel(); } }, 'Stop');
    this.resume = new ResumeControl(() => cb.onResume());
    this.resume.visible = false;
    this.modes = new ModePicker((mode) => cb.onSetMode(mode));
    this.statusEl = h('div', { class: 'chat-status', role: 'status', 'aria-live': 'polite', 'data-status': 'idle' }, h('span', { class: 'status-dot', 'aria-hidden': 'true' }), this.statusText, this.statusJump, this.stopButton, this.modes.root, this.resume.root);
    this.empty = h('p', { class: 'chat-empty' }, 'No messages yet. Type a prompt below, or in the terminal.');
    // Placed by `render` below the earlier conversation, above this session's own.
    this.resumedNote = h('p', { class: 'resumed-note', role: 'note' });
    this.log = h('div', { class: 'chat-log', role: 'log', 'aria-label': 'Conversation', tabindex: 0, onscroll: () => { this.onScroll(); } }, this.empty);
    this.jumpButton = h('button', { type: 'button', class: 'btn approval-jump', hidden: true, onclick: () => { this.jumpToApproval(); } }, h('span', { class: 'status-dot', 'aria-hidden': 'true' }), 'Approval waiting ', h('span', { 'aria-hidden': 'true' }, '↓'));
    this.input = h('textarea', {
      class: 'composer-input',
      rows: 1,
      placeholder: 'Message the agent…',
      title: 'Enter sends; Shift+Enter starts a new line',
      'aria-label': 'Message',
      'aria-describedby': 'composer-note',
      enterkeyhint: 'send',
      onkeydown: (ev: Event) => { this.onKey(ev as KeyboardEvent); },
      oninput: () => { this.autosize(); },
    });
    this.sendButton = h('button', { type: 'submit', class: 'btn btn-primary send' }, 'Send');
    this.composerNote = h('p', { id: 'composer-note', class: 'composer-note', hidden: true });
    const form = h('form', { class: 'composer', onsubmit: (ev: Event) => { ev.preventDefault(); this.send(); } }, this.composerNote, this.input, this.sendButton);
    this.composer = form;
    this.root = h('section', { class: 'pane chat-pane', 'aria-label': 'Chat' }, this.statusEl, h('div', { class: 'chat-log-wrap' }, this.log, this.jumpButton), form);
    // The log changes size (layout switch, window or keyboard): keep following, and re-check the jump control.
    if (typeof ResizeObserver !== 'undefined') {
      this.resizeObserver = new ResizeObserver(() => { this.afterLayout(); });
      this.resizeObserver.observe(this.log);
    }
  }

  /** The reader is following the conversation (not scrolled up). */
  get following(): boolean {
    return this.follow;
  }

  /**
   * Scrolls a pending approval (`requestId`'s, else the first) into view and
   * gives it the keyboard; false when there is no such card (yet).
   */
  jumpToApproval(requestId?: string): boolean {
    const card = this.pendingApprovals().find((c) => requestId === undefined || c.dataset.requestId === requestId);
    if (!card) return false;
    card.scrollIntoView({ block: 'center' });
    card.focus({ preventScroll: true });
    this.follow = this.atBottom();
    this.updateJump();
    return true;
  }

  private pendingApprovals(): HTMLElement[] {
    return [...this.log.querySelectorAll<HTMLElement>('.approval[data-approval-state]')];
  }

  private atBottom(): boolean {
    return this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 48;
  }

  private scrollToBottom(): void {
    const top = this.log.scrollHeight - this.log.clientHeight;
    if (Math.abs(this.log.scrollTop - top) < 1) return;
    this.log.scrollTop = top;
    this.autoScrollTop = this.log.scrollTop;
  }

  private onScroll(): void {
    // Our own scroll keeps following; the reader's decides by where it ends.
    if (this.autoScrollTop >= 0 && Math.abs(this.log.scrollTop - this.autoScrollTop) < 1) {
      this.autoScrollTop = -1;
    } else {
      this.autoScrollTop = -1;
      this.follow = this.atBottom();
    }
    this.updateJump();
  }

  private afterLayout(state?: ChatState): void {
    if (this.follow) this.scrollToBottom();
    // No approval pending: no need to look for cards in the DOM.
    if (state && this.jumpButton.hidden && !Object.values(state.approvals).some((a) => a.state === 'pending')) return;
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

  /** Moves the keyboard focus to the composer. */
  focusComposer(): void {
    this.input.focus();
  }

  /** Draws `state`. Cheap when little changed. */
  render(state: ChatState, ctx: ChatContext): void {
    this.renderStatus(state, ctx);
    const exited = state.exit !== null;
    const ctxKey = `${String(ctx.channel?.approve ?? true)}|${String(exited)}|${ctx.role ?? ''}`;
    const last = this.lastDrawn;
    this.lastDrawn = { items: state.items, approvals: state.approvals, pending: state.pending, exit: state.exit, ctxKey, history: ctx.history, resumedFrom: ctx.resumedFrom };
    // The earlier conversation and the resumed-from note come with the context, later than the state.
    if (last?.items === state.items && last.approvals === state.approvals && last.pending === state.pending && last.exit === state.exit && last.ctxKey === ctxKey && last.history === ctx.history && last.resumedFrom === ctx.resumedFrom) {
      // Only streamed text (or the status) changed: no walk over the transcript.
      this.updateLive(state);
      this.afterLayout(state);
      return;
    }
    const active = document.activeElement;
    let refocus: { el: HTMLElement; key: string | undefined } | undefined;

    const wanted: Rendered[] = [];
    const place = (key: string, item: Rendered['item'], approval: ApprovalView | undefined, make: (old: HTMLElement | undefined) => HTMLElement): void => {
      const old = this.rendered.get(key);
      if (old?.item === item && old.approval === approval && old.ctxKey === ctxKey) {
        wanted.push(old);
        return;
      }
      const el = make(old?.el);
      if (old && active instanceof HTMLElement && old.el.contains(active)) {
        // Keep the keyboard where it was: on the same control, or on the card.
        refocus = { el, key: active.closest<HTMLElement>('[data-focus-key]')?.dataset.focusKey };
      }
      const r = { el, item, approval, ctxKey };
      this.rendered.set(key, r);
      wanted.push(r);
    };
    // The earlier conversation first, read-only, each session under its own heading.
    for (const seg of ctx.history ?? []) {
      place(`history:${seg.session}`, seg, undefined, () => historyHeading(seg.session));
      for (const item of seg.state.items) {
        const approval = item.kind === 'tool' ? approvalOf(seg.state, item) : undefined;
        place(`h:${seg.session}:${item.id}`, item, approval, (old) => this.renderItem(item, approval, old, ctx, true));
      }
    }
    const from = ctx.resumedFrom;
    if (from !== undefined) {
      place('resumed', from, undefined, () => {
        this.renderResumed(from);
        return this.resumedNote;
      });
    }
    for (const item of state.items) {
      const approval = item.kind === 'tool' ? approvalOf(state, item) : undefined;
      place(item.id, item, approval, (old) => this.renderItem(item, approval, old, ctx, exited));
    }
    for (const p of state.pending) place(`pending:${p.id}`, p, undefined, () => this.pendingEl(p, exited));
    if (state.exit) {
      const exit = state.exit;
      place('exit', exit, undefined, () => h('p', { class: `exit-note${exit.success ? '' : ' is-error'}`, 'data-kind': 'exit', role: 'note' }, `${exitSentence(exit)}.`));
    }

    // Put the elements in order, moving only what is out of place.
    const keep = new Set(wanted.map((r) => r.el));
    for (const [key, r] of this.rendered) {
      if (!keep.has(r.el)) {
        r.el.remove();
        this.rendered.delete(key);
      }
    }
    this.empty.hidden = wanted.length > 0;
    let cursor: Element | null = this.empty.nextElementSibling;
    for (const r of wanted) {
      if (r.el !== cursor) this.log.insertBefore(r.el, cursor);
      else cursor = cursor.nextElementSibling;
    }
    for (const child of [...this.log.children]) {
      if (child !== this.empty && !keep.has(child as HTMLElement)) child.remove();
    }
    if (refocus) {
      const { el, key } = refocus;
      const same = [...el.querySelectorAll<HTMLElement>('[data-focus-key]')].find((e) => e.dataset.focusKey === key && !(e instanceof HTMLButtonElement && e.disabled));
      const target = same ?? el.querySelector<HTMLElement>('.approval[tabindex], .approval-done[tabindex]') ?? el;
      target.focus({ preventScroll: true });
    }
    this.updateLive(state);
    this.afterLayout(state);
  }

  /** Appends what streamed since the last frame to each open block's live text node. */
  private updateLive(state: ChatState): void {
    for (const [id, text] of Object.entries(state.stream?.live ?? {})) {
      const target = this.rendered.get(id)?.el.querySelector('[data-live]');
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
    let text = STATUS_TEXT[status];
    if (status === 'exited' && state.exit) {
      text = state.exit.signal !== undefined ? `Exited (${state.exit.signal})` : `Exited (code ${state.exit.code ?? '?'})`;
    }
    const events = ctx.channel?.events ?? true;
    if (!events) text = 'This program has no chat view; use the terminal.';
    if (this.statusText.textContent !== text) this.statusText.textContent = text;
    const link = status === 'awaiting_approval' && events;
    this.statusText.hidden = link;
    this.statusJump.hidden = !link;
    this.statusEl.dataset.status = status;
    this.stopButton.hidden = !canDrive(ctx.role) || !(status === 'thinking' || status === 'responding' || status === 'running_tool');
    // No prompt box for roles that cannot send prompts (viewer, approver).
    this.composer.hidden = !canDrive(ctx.role);
    this.modes.update(state.exit ? undefined : agentModes(state.agent), canDrive(ctx.role));
    this.resume.visible = status === 'exited' && ctx.resumable;
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

  private renderItem(item: ChatItem, approval: ApprovalView | undefined, old: HTMLElement | undefined, ctx: ChatContext, exited: boolean): HTMLElement {
    switch (item.kind) {
      case 'user':
        return item.command !== undefined ? this.commandEl(item) : h('article', { class: 'msg user', 'data-kind': 'user', 'aria-label': 'You' }, h('div', { class: 'bubble' }, item.text));
      case 'assistant': {
        const body = h('div', { class: 'markdown' });
        body.innerHTML = renderMarkdown(item.text);
        // While it streams, new text is appended as plain text (see updateLive).
        if (item.streaming) body.append(h('p', { class: 'live-text', 'data-live': '' }));
        return h('article', { class: `msg assistant${item.streaming ? ' streaming' : ''}`, 'data-kind': 'assistant', 'aria-label': 'Assistant' }, body);
      }
      case 'thinking': {
        const wasOpen = old instanceof HTMLDetailsElement && old.open;
        return h('details', { class: 'thinking', 'data-kind': 'thinking', open: wasOpen }, h('summary', {}, item.streaming ? 'Thinking…' : 'Thought'), h('div', { class: 'thinking-text' }, item.text, item.streaming && h('span', { 'data-live': '' })));
      }
      case 'tool':
        return this.toolCard(item, approval, old, ctx, exited);
      case 'notice':
        return h('p', { class: `notice notice-${item.level}`, 'data-kind': 'notice', role: item.level === 'error' ? 'alert' : undefined }, item.count > 1 ? `${item.text} (×${item.count})` : item.text);
    }
  }

  /** A slash command sent from the chat: the agent answers it in its terminal. */
  private commandEl(item: UserItem): HTMLElement {
    return h(
      'article',
      { class: 'msg user command', 'data-kind': 'user', 'data-command': item.command, 'aria-label': 'You (command)' },
      h('div', { class: 'bubble' }, item.text),
      h(
        'span',
        { class: 'pending-note command-note' },
        item.command === 'queued' ? 'Queued until the agent is ready; its output will be in the terminal. ' : 'A command for the agent: its output is in the terminal. ',
        h('button', { type: 'button', class: 'linkish show-terminal', onclick: () => { this.cb.onShowTerminal(); } }, 'Show terminal'),
      ),
    );
  }

  private toolCard(tool: ToolItem, approval: ApprovalView | undefined, old: HTMLElement | undefined, ctx: ChatContext, exited: boolean): HTMLElement {
    const p = presentTool(tool.input);
    const summary = toolSummary(p);
    const header = h(
      'header',
      { class: 'tool-head' },
      h('span', { class: 'tool-name' }, tool.name),
      summary !== '' && h('code', { class: 'tool-summary', title: summary }, summary),
      h('span', { class: `badge badge-${tool.status}` }, TOOL_STATUS_TEXT[tool.status]),
    );
    // Focusable (not in the tab order) so the keyboard has somewhere to stay when the buttons go.
    const card = h('article', { class: `tool tool-${tool.status}`, 'data-kind': 'tool', 'data-tool-status': tool.status, 'data-tool-use-id': tool.toolUseId, 'aria-label': `Tool call ${tool.name}`, tabindex: -1 }, header);

    if (!tool.inputComplete) {
      // The input as it streams (more is appended by updateLive).
      card.append(h('pre', { class: 'tool-input streaming' }, tool.partialJson, h('span', { 'data-live': '' })));
    } else {
      switch (p.kind) {
        case 'shell':
          card.append(h('pre', { class: 'tool-input shell' }, h('span', { class: 'prompt', 'aria-hidden': 'true' }, '$ '), p.command));
          if (p.description !== undefined) card.append(h('p', { class: 'tool-desc' }, p.description));
          break;
        case 'edit':
          card.append(diffView(p.path, p.before, p.after));
          break;
        case 'write':
          card.append(diffView(p.path, '', p.content));
          break;
        case 'json':
          if (p.text !== '') card.append(h('pre', { class: 'tool-input' }, p.text));
          break;
      }
    }

    if (approval) card.append(this.approvalBlock(tool, approval, approvalQuestion(tool.name, p), ctx, exited));

    if (tool.result) {
      let text = resultText(tool.result.content);
      const lines = text.split('\n').length;
      if (text.length > MAX_RESULT_CHARS) text = `${text.slice(0, MAX_RESULT_CHARS)}\n… (cut; the terminal has the rest)`;
      // Keep the reader's open/closed choice across re-renders; short results start open.
      const prev = old?.querySelector('details.tool-result');
      const wasOpen = prev instanceof HTMLDetailsElement ? prev.open : lines <= 12;
      card.append(
        h(
          'details',
          { class: `tool-result${tool.result.isError ? ' is-error' : ''}`, open: wasOpen },
          h('summary', {}, tool.result.isError ? 'Error' : `Result${lines > 1 ? ` (${lines} lines)` : ''}`),
          h('pre', {}, text === '' ? '(no output)' : text),
        ),
      );
    }
    return card;
  }

  private approvalBlock(tool: ToolItem, a: ApprovalView, question: string, ctx: ChatContext, exited: boolean): HTMLElement {
    const chosen = chosenOption(a);
    if (a.state === 'pending') {
      const choices = choicesOf(a);
      const canAnswer = (ctx.channel?.approve ?? true) && !exited && canApprove(ctx.role);
      const busy = a.sending || !canAnswer;
      const firstAllow = choices.find((c) => kindAllows(c.kind));
      const firstReject = choices.find((c) => !kindAllows(c.kind));
      const keys = [firstAllow && 'Enter', firstReject && 'Escape', choices.length > 0 && `1…${choices.length}`].filter((k): k is string => typeof k === 'string');
      const pick = (c: Choice | undefined): void => {
        if (c && !busy) this.cb.onApprove(a.requestId, c.choice);
      };
      const line = a.sending
        ? `Sending your answer${chosen ? `: “${chosen.label}”` : ''}…`
        : !canApprove(ctx.role) && !exited
          ? `${question} Waiting for the owner or an approver (you are ${ctx.role ?? ''}).`
          : !canAnswer
          ? `${question} ${exited ? 'The program has exited.' : 'Answer in the terminal: this agent takes approvals only there.'}`
          : question;
      return h(
        'div',
        {
          class: 'approval',
          role: 'group',
          'aria-label': `Approve ${tool.name}?`,
          'aria-keyshortcuts': canAnswer ? keys.join(' ') : undefined,
          tabindex: 0,
          'data-focus-key': 'approval',
          'data-approval-state': a.sending ? 'sending' : 'pending',
          'data-request-id': a.requestId,
          onkeydown: (ev: Event) => {
            const k = ev as KeyboardEvent;
            if (k.altKey || k.ctrlKey || k.metaKey || k.isComposing || busy) return;
            let c: Choice | undefined;
            // Enter on a focused button presses that button, as usual.
            if (k.key === 'Enter' && !(k.target instanceof HTMLButtonElement)) c = firstAllow;
            else if (k.key === 'Escape' || k.key === 'Backspace') c = firstReject;
            else if (/^[1-9]$/.test(k.key)) c = choices[Number(k.key) - 1];
            if (!c) return;
            k.preventDefault();
            k.stopPropagation();
            pick(c);
          },
        },
        h('p', { class: 'approval-q' }, line),
        a.error !== undefined && h('p', { class: 'approval-error', role: 'alert' }, `Your answer was not delivered: ${a.error}`),
        canApprove(ctx.role) && h(
          'div',
          { class: 'approval-buttons' },
          ...choices.map((c, i) =>
            h(
              'button',
              {
                type: 'button',
                class: `btn ${kindAllows(c.kind) ? 'btn-allow' : 'btn-deny'} opt-${c.kind}`,
                disabled: busy,
                'data-action': kindAllows(c.kind) ? 'allow' : 'deny',
                'data-option': 'option' in c.choice ? c.choice.option : undefined,
                'data-focus-key': `opt:${i}`,
                'aria-keyshortcuts': canAnswer ? String(i + 1) : undefined,
                onclick: () => { pick(c); },
              },
              h('kbd', { class: 'opt-key', 'aria-hidden': 'true' }, String(i + 1)),
              c.label,
            ),
          ),
        ),
        canAnswer && h('p', { class: 'approval-keys', 'aria-hidden': 'true' }, keyHint(firstAllow, firstReject, choices.length)),
      );
    }
    if (isSentUnconfirmed(a)) {
      const what = chosen ? `you chose “${chosen.label}”` : a.state === 'allowed' ? 'you allowed it' : 'you denied it';
      const text = exited ? `Sent (${what}), but the program ended before confirming it.` : `Sent — waiting for the agent… (${what})`;
      return h('p', { class: 'approval-done approval-sent', 'data-approval-state': 'sent', 'data-focus-key': 'outcome', tabindex: -1 }, text);
    }
    return h('p', { class: `approval-done approval-${a.state}`, 'data-approval-state': a.state, 'data-focus-key': 'outcome', tabindex: -1 }, outcomeText(a, chosen));
  }

  private pendingEl(p: PendingSubmit, exited: boolean): HTMLElement {
    const failed = p.state === 'failed';
    return h(
      'article',
      { class: `msg user pending${failed ? ' failed' : ''}`, 'data-kind': 'pending', 'data-pending-state': p.state, 'aria-label': failed ? 'You (not sent)' : 'You (sending)' },
      h('div', { class: 'bubble' }, p.text),
      h(
        'span',
        { class: 'pending-note', role: failed ? 'alert' : undefined },
        failed && p.error !== undefined ? `${PENDING_NOTE.failed}: ${p.error}` : PENDING_NOTE[p.state],
        failed && !exited && ' ',
        failed && !exited && h('button', { type: 'button', class: 'linkish', onclick: () => { this.cb.onDiscard(p.id); this.cb.onSubmit(p.text); } }, 'Send again'),
        failed && ' ',
        failed && h('button', { type: 'button', class: 'linkish', onclick: () => { this.cb.onDiscard(p.id); } }, 'Dismiss'),
      ),
    );
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

  private send(): void {
    const text = this.input.value;
    if (text.trim() === '' || this.input.disabled) return;
    if (this.cb.onSubmit(text)) {
      this.input.value = '';
      this.autosize();
    }
  }

  private autosize(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 200)}px`;
  }
}

function kindAllows(kind: ApprovalOptionKind): boolean {
  return kind === 'allow_once' || kind === 'allow_always';
}

/** The card's buttons: the agent's options in its order, or Allow/Deny when it named none. */
function choicesOf(a: ApprovalView): Choice[] {
  if (a.options.length === 0) {
    return [
      { label: 'Allow', kind: 'allow_once', choice: { allowed: true } },
      { label: 'Deny', kind: 'reject_once', choice: { allowed: false } },
    ];
  }
  return a.options.map((o) => ({ label: o.label, kind: o.kind, choice: { option: o.id } }));
}

function keyHint(allow: Choice | undefined, reject: Choice | undefined, n: number): string {
  const parts: string[] = [];
  if (allow) parts.push(`Enter: ${allow.label}`);
  if (reject) parts.push(`Esc: ${reject.label}`);
  if (n > 0) parts.push(n === 1 ? '1: the option' : `1–${n}: pick an option`);
  return parts.join(' · ');
}

/** "Allowed in the browser", "Denied in the terminal (“No, and tell it why”)", "Abandoned …". */
export function outcomeText(a: ApprovalView, chosen: ApprovalOption | undefined): string {
  if (a.state === 'abandoned') return 'Abandoned: the agent stopped waiting for an answer.';
  const what = a.state === 'allowed' ? 'Allowed' : 'Denied';
  // The main token (`owner`) is everyone on a one-person duet: name only the others.
  const by = a.decidedByName !== undefined && a.decidedByName !== '' && a.decidedByName !== 'owner' ? ` by ${a.decidedByName}` : '';
  const who = a.decidedBy === 'terminal' ? ' in the terminal' : a.decidedBy === 'client' ? `${by} in the browser` : '';
  // The option's own words, unless they only repeat the outcome ("Allow", "Deny").
  const plain = chosen === undefined || /^(allow|yes|deny|no|reject)$/i.test(chosen.label.trim()) || (optionAllows(chosen) !== (a.state === 'allowed'));
  return `${what}${who}${plain ? '' : ` (“${chosen.label}”)`}.`;
}

/** "The program exited with code 3", "The program was ended by SIGTERM". */
export function exitSentence(e: ExitInfo): string {
  if (e.signal !== undefined) return `The program was ended by ${e.signal}`;
  return `The program exited with code ${e.code ?? '?'}`;
}

function diffView(path: string, before: string, after: string): HTMLElement {
  const lines = diffLines(before, after);
  const shown = lines.slice(0, MAX_DIFF_LINES);
  const adds = lines.filter((l) => l.op === 'add').length;
  const dels = lines.filter((l) => l.op === 'del').length;
  return h(
    'figure',
    { class: 'diff' },
    h('figcaption', {}, h('code', {}, path), h('span', { class: 'diff-stat' }, h('span', { class: 'diff-add-n' }, `+${adds}`), ' ', h('span', { class: 'diff-del-n' }, `−${dels}`))),
    h(
      'pre',
      { class: 'diff-body' },
      // <ins>/<del> so assistive technology hears what changed, not just colours.
      ...shown.map((l) => h(l.op === 'add' ? 'ins' : l.op === 'del' ? 'del' : 'span', { class: `diff-line diff-${l.op}` }, h('span', { class: 'diff-sign', 'aria-hidden': 'true' }, l.op === 'add' ? '+' : l.op === 'del' ? '-' : ' '), l.text, '\n')),
      lines.length > shown.length && h('span', { class: 'diff-line diff-more' }, `… ${lines.length - shown.length} more lines`),
    ),
  );
}

/** The heading over one earlier session's part of the conversation. */
function historyHeading(session: string): HTMLElement {
  return h('p', { class: 'history-heading', role: 'note', 'data-session-id': session }, 'Earlier conversation (session ', h('a', { href: `#/session/${encodeURIComponent(session)}` }, session.slice(0, 8)), ')');
}
