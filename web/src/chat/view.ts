// The chat pane: status line, transcript, composer. It renders a ChatState and
// reports user intents (submit, approve, cancel) through callbacks; it owns no
// conversation state of its own. Items are keyed by id and rebuilt only when
// their object (or their approval's) changed, so a streaming delta touches one
// element, not the whole transcript.
import { h } from '../ui/dom';
import { diffLines } from './diff';
import { renderMarkdown } from './markdown';
import { resultText } from './sidecar';
import {
  approvalOf,
  chatStatus,
  type ApprovalView,
  type ChatItem,
  type ChatState,
  type ChatStatus,
  type PendingSubmit,
  type ToolItem,
  type ToolStatus,
} from './state';
import { approvalQuestion, presentTool, toolSummary } from './tools';

/** What the chat asks its owner to do. */
export interface ChatCallbacks {
  /** Send a prompt; false when it could not be sent (the text stays in the box). */
  onSubmit(text: string): boolean;
  onApprove(requestId: string, allowed: boolean): void;
  /** Interrupt the program (Escape into the terminal). */
  onCancel(): void;
}

/** Extra facts the view needs besides the chat state. */
export interface ChatContext {
  /** The profile has a sidecar; without one there is no chat, only the terminal. */
  readonly sidecar: boolean;
  /** The socket is open (the composer still works through REST when it is not). */
  readonly connected: boolean;
}

interface Rendered {
  el: HTMLElement;
  item: ChatItem | PendingSubmit;
  approval: ApprovalView | undefined;
}

const STATUS_TEXT: Record<ChatStatus, string> = {
  idle: 'Idle',
  thinking: 'Thinking…',
  responding: 'Responding…',
  running_tool: 'Running a tool…',
  awaiting_approval: 'Waiting for your approval',
  exited: 'Exited',
};

const TOOL_STATUS_TEXT: Record<ToolStatus, string> = {
  streaming: 'preparing',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  done: 'done',
  error: 'error',
  denied: 'denied',
  abandoned: 'abandoned',
};

const PENDING_NOTE: Record<PendingSubmit['state'], string> = {
  sending: 'sending…',
  queued: 'queued until the agent is ready',
  unconfirmed: 'not confirmed: the connection dropped. If it does not appear, send it again.',
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
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly stopButton: HTMLButtonElement;
  private readonly rendered = new Map<string, Rendered>();
  private lastStatus: ChatStatus | undefined;

  constructor(private readonly cb: ChatCallbacks) {
    this.statusText = h('span', { class: 'status-text' }, 'Connecting…');
    this.stopButton = h('button', { type: 'button', class: 'btn btn-quiet stop', hidden: true, title: 'Interrupt (Escape)', onclick: () => { cb.onCancel(); } }, 'Stop');
    this.statusEl = h('div', { class: 'chat-status', role: 'status', 'aria-live': 'polite', 'data-status': 'idle' }, h('span', { class: 'status-dot', 'aria-hidden': 'true' }), this.statusText, this.stopButton);
    this.empty = h('p', { class: 'chat-empty' }, 'No messages yet. Type a prompt below, or in the terminal.');
    this.log = h('div', { class: 'chat-log', role: 'log', 'aria-label': 'Conversation', tabindex: 0 }, this.empty);
    this.input = h('textarea', {
      class: 'composer-input',
      rows: 1,
      placeholder: 'Message the agent…',
      title: 'Enter sends; Shift+Enter starts a new line',
      'aria-label': 'Message',
      enterkeyhint: 'send',
      onkeydown: (ev: Event) => { this.onKey(ev as KeyboardEvent); },
      oninput: () => { this.autosize(); },
    });
    this.sendButton = h('button', { type: 'submit', class: 'btn btn-primary send' }, 'Send');
    const form = h('form', { class: 'composer', onsubmit: (ev: Event) => { ev.preventDefault(); this.send(); } }, this.input, this.sendButton);
    this.root = h('section', { class: 'pane chat-pane', 'aria-label': 'Chat' }, this.statusEl, this.log, form);
  }

  /** Moves the keyboard focus to the composer. */
  focusComposer(): void {
    this.input.focus();
  }

  /** Draws `state`. Cheap when little changed. */
  render(state: ChatState, ctx: ChatContext): void {
    this.renderStatus(state, ctx);
    const stick = this.log.scrollHeight - this.log.scrollTop - this.log.clientHeight < 48;

    const wanted: Rendered[] = [];
    for (const item of state.items) {
      const approval = item.kind === 'tool' ? approvalOf(state, item) : undefined;
      const old = this.rendered.get(item.id);
      if (old?.item === item && old.approval === approval) {
        wanted.push(old);
        continue;
      }
      const el = this.renderItem(item, approval, old?.el);
      const r = { el, item, approval };
      this.rendered.set(item.id, r);
      wanted.push(r);
    }
    for (const p of state.pending) {
      const key = `pending:${p.id}`;
      const old = this.rendered.get(key);
      if (old?.item === p) {
        wanted.push(old);
        continue;
      }
      const r = { el: pendingEl(p), item: p, approval: undefined };
      this.rendered.set(key, r);
      wanted.push(r);
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
    if (stick) this.log.scrollTop = this.log.scrollHeight;
  }

  private renderStatus(state: ChatState, ctx: ChatContext): void {
    const status = chatStatus(state);
    let text = STATUS_TEXT[status];
    if (status === 'exited' && state.exit) {
      text = state.exit.signal !== undefined ? `Exited (${state.exit.signal})` : `Exited (code ${state.exit.code ?? '?'})`;
    }
    if (!ctx.sidecar) text = 'This program has no chat view; use the terminal.';
    if (this.statusText.textContent !== text) this.statusText.textContent = text;
    this.statusEl.dataset.status = status;
    this.stopButton.hidden = !(status === 'thinking' || status === 'responding' || status === 'running_tool');
    this.log.setAttribute('aria-busy', String(status === 'responding'));
    const ended = status === 'exited';
    this.input.disabled = ended || !ctx.sidecar;
    this.sendButton.disabled = ended || !ctx.sidecar;
    if (ended && this.lastStatus !== 'exited') this.input.placeholder = 'The program has exited.';
    this.lastStatus = status;
  }

  private renderItem(item: ChatItem, approval: ApprovalView | undefined, old: HTMLElement | undefined): HTMLElement {
    switch (item.kind) {
      case 'user':
        return h('article', { class: 'msg user', 'data-kind': 'user', 'aria-label': 'You' }, h('div', { class: 'bubble' }, item.text));
      case 'assistant': {
        const body = h('div', { class: 'markdown' });
        body.innerHTML = renderMarkdown(item.text);
        return h('article', { class: `msg assistant${item.streaming ? ' streaming' : ''}`, 'data-kind': 'assistant', 'aria-label': 'Assistant' }, body);
      }
      case 'thinking': {
        const wasOpen = old instanceof HTMLDetailsElement && old.open;
        return h('details', { class: 'thinking', 'data-kind': 'thinking', open: wasOpen }, h('summary', {}, item.streaming ? 'Thinking…' : 'Thought'), h('div', { class: 'thinking-text' }, item.text));
      }
      case 'tool':
        return this.toolCard(item, approval, old);
      case 'notice':
        return h('p', { class: `notice notice-${item.level}`, 'data-kind': 'notice', role: item.level === 'error' ? 'alert' : undefined }, item.count > 1 ? `${item.text} (×${item.count})` : item.text);
    }
  }

  private toolCard(tool: ToolItem, approval: ApprovalView | undefined, old: HTMLElement | undefined): HTMLElement {
    const p = presentTool(tool.input);
    const summary = toolSummary(p);
    const header = h(
      'header',
      { class: 'tool-head' },
      h('span', { class: 'tool-name' }, tool.name),
      summary !== '' && h('code', { class: 'tool-summary', title: summary }, summary),
      h('span', { class: `badge badge-${tool.status}` }, TOOL_STATUS_TEXT[tool.status]),
    );
    const card = h('article', { class: `tool tool-${tool.status}`, 'data-kind': 'tool', 'data-tool-status': tool.status, 'data-tool-use-id': tool.toolUseId, 'aria-label': `Tool call ${tool.name}` }, header);

    if (!tool.inputComplete && tool.partialJson !== '') {
      card.append(h('pre', { class: 'tool-input streaming' }, tool.partialJson));
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

    if (approval) card.append(this.approvalBlock(tool, approval, approvalQuestion(tool.name, p)));

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

  private approvalBlock(tool: ToolItem, a: ApprovalView, question: string): HTMLElement {
    if (a.state === 'pending') {
      const busy = a.sending;
      return h(
        'div',
        { class: 'approval', role: 'group', 'aria-label': `Approve ${tool.name}?` },
        h('p', { class: 'approval-q' }, busy ? 'Sending your answer…' : question),
        h('div', { class: 'approval-buttons' },
          h('button', { type: 'button', class: 'btn btn-allow', disabled: busy, 'data-action': 'allow', onclick: () => { this.cb.onApprove(a.requestId, true); } }, 'Allow'),
          h('button', { type: 'button', class: 'btn btn-deny', disabled: busy, 'data-action': 'deny', onclick: () => { this.cb.onApprove(a.requestId, false); } }, 'Deny'),
        ),
      );
    }
    const who = a.decidedBy === 'terminal' ? ' in the terminal' : a.decidedBy === 'client' ? ' from the chat view' : '';
    const what = a.state === 'allowed' ? 'Allowed' : a.state === 'denied' ? 'Denied' : 'No longer waiting (abandoned)';
    return h('p', { class: `approval-done approval-${a.state}`, 'data-approval-state': a.state }, `${what}${who}.`);
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

function pendingEl(p: PendingSubmit): HTMLElement {
  return h(
    'article',
    { class: 'msg user pending', 'data-kind': 'pending', 'aria-label': 'You (sending)' },
    h('div', { class: 'bubble' }, p.text),
    h('span', { class: 'pending-note' }, PENDING_NOTE[p.state]),
  );
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
