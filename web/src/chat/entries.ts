// The chat log's entries, one element per item: messages, thinking, tool
// cards (input, diff, result, approval), commands, unsent prompts, the exit
// note and the heading over an earlier session. Each is an article of the
// log's feed (an <article>, or role="article"). Pure builders: the view
// decides when an entry is rebuilt.
import { h } from '../ui/dom';
import { approvalCard } from './approval-card';
import type { ChatCallbacks, ChatContext } from './callbacks';
import { diffLines } from './diff';
import { renderMarkdown } from './markdown';
import { resultText } from './sidecar';
import type { ApprovalView, ChatItem, PendingSubmit, ToolItem, ToolStatus, UserItem } from './state';
import { approvalQuestion, presentTool, toolSummary } from './tools';


const TOOL_STATUS_TEXT: Record<ToolStatus, string> = {
  streaming: 'preparing',
  running: 'running',
  awaiting_approval: 'awaiting approval',
  sent: 'answer sent',
  done: 'done',
  error: 'error',
  denied: 'denied',
  abandoned: 'abandoned',
  interrupted: 'did not finish',
};

const PENDING_NOTE: Record<PendingSubmit['state'], string> = {
  sending: 'sending…',
  queued: 'queued until the agent is ready',
  unconfirmed: 'not confirmed: the connection dropped. If it does not appear, send it again.',
  failed: 'not sent',
  unsent: 'Not delivered: the program ended before it took this prompt.',
};

/** An unsent prompt in a session that runs came from the session it resumed. */
const UNSENT_EARLIER = 'Not delivered: the earlier session ended before its agent took this prompt.';

/** Results longer than this are cut in the card (the terminal has them whole). */
const MAX_RESULT_CHARS = 20_000;
/** Diff lines shown before "… N more lines". */
const MAX_DIFF_LINES = 400;

/** The element of one transcript item (`old` is its previous element, for open/closed state). */
export function renderItem(cb: ChatCallbacks, item: ChatItem, approval: ApprovalView | undefined, old: HTMLElement | undefined, ctx: ChatContext, exited: boolean): HTMLElement {
  switch (item.kind) {
    case 'user':
      return item.command !== undefined ? commandEl(cb, item) : h('article', { class: 'msg user', 'data-kind': 'user', 'aria-label': 'You' }, h('div', { class: 'bubble' }, item.text));
    case 'assistant': {
      const body = h('div', { class: 'markdown' });
      body.innerHTML = renderMarkdown(item.text);
      // While it streams, new text is appended as plain text (see updateLive).
      if (item.streaming) body.append(h('p', { class: 'live-text', 'data-live': '' }));
      return h('article', { class: `msg assistant${item.streaming ? ' streaming' : ''}`, 'data-kind': 'assistant', 'aria-label': 'Assistant' }, body);
    }
    case 'thinking': {
      const wasOpen = old?.querySelector('details')?.open === true;
      return h('article', { class: 'thinking-entry', 'data-kind': 'thinking', 'aria-label': 'Thinking' }, h('details', { class: 'thinking', open: wasOpen }, h('summary', {}, item.streaming ? 'Thinking…' : 'Thought'), h('div', { class: 'thinking-text' }, item.text, item.streaming && h('span', { 'data-live': '' }))));
    }
    case 'tool':
      return toolCard(cb, item, approval, old, ctx, exited);
    case 'notice':
      // Told as it comes by the chat's live region (chat/announce.ts), not as an alert each time it is drawn.
      return h('p', { class: `notice notice-${item.level}`, 'data-kind': 'notice', role: 'article' }, item.count > 1 ? `${item.text} (×${item.count})` : item.text);
  }
}

/** A slash command sent from the chat: the agent answers it in its terminal. */
function commandEl(cb: ChatCallbacks, item: UserItem): HTMLElement {
  return h(
    'article',
    { class: 'msg user command', 'data-kind': 'user', 'data-command': item.command, 'aria-label': 'You (command)' },
    h('div', { class: 'bubble' }, item.text),
    h(
      'span',
      { class: 'pending-note command-note' },
      item.command === 'queued' ? 'Queued until the agent is ready; its output will be in the terminal. ' : 'A command for the agent: its output is in the terminal. ',
      h('button', { type: 'button', class: 'linkish show-terminal', onclick: () => { cb.onShowTerminal(); } }, 'Show terminal'),
    ),
  );
}

function toolCard(cb: ChatCallbacks, tool: ToolItem, approval: ApprovalView | undefined, old: HTMLElement | undefined, ctx: ChatContext, exited: boolean): HTMLElement {
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

  if (approval) card.append(approvalCard(cb, tool, approval, approvalQuestion(tool.name, p), ctx, exited));
  else if (tool.result && ctx.channel?.approve === true) {
    // It ran, and the agent, which asks through this channel, never asked:
    // its mode or its rules let it through (Qwen's Auto mode, Claude's
    // accept-edits, an "always allow"), which the reader should know.
    card.append(h('p', { class: 'tool-auto' }, 'Auto-approved by the agent’s mode'));
  }

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

/**
 * A prompt not in the transcript (yet): on its way, queued, not sent, or
 * not delivered (`unsent`: the server held it and the program never took
 * it; its text stays, to copy or to send to the agent that resumed the
 * conversation, until a client lets go of it, in every tab and across
 * reloads). `drives`: this client may send prompts. `spent`: why the
 * session's budget holds prompts, when it does (a queued prompt says so
 * rather than "until the agent is ready").
 */
export function pendingEl(cb: ChatCallbacks, p: PendingSubmit, exited: boolean, drives: boolean, spent?: string): HTMLElement {
  const unsent = p.state === 'unsent';
  const failed = p.state === 'failed' || unsent;
  const note = unsent
    ? (exited ? PENDING_NOTE.unsent : UNSENT_EARLIER)
    : failed && p.error !== undefined
      ? `${PENDING_NOTE.failed}: ${p.error}`
      : p.state === 'queued' && spent !== undefined
        ? `held: ${spent}; it goes when an owner raises the budget (on the board)`
        : PENDING_NOTE[p.state];
  const canSend = failed && !exited && drives;
  // A failed prompt is this tab's alone; an unsent one is let go of on the server.
  const canDismiss = failed && (drives || !unsent);
  return h(
    'article',
    { class: `msg user pending${failed ? ' failed' : ''}${unsent ? ' unsent' : ''}`, 'data-kind': 'pending', 'data-pending-state': p.state, 'aria-label': unsent ? 'You (not delivered)' : failed ? 'You (not sent)' : 'You (sending)' },
    h('div', { class: 'bubble' }, p.text),
    h(
      'span',
      { class: 'pending-note', role: p.state === 'failed' ? 'alert' : undefined },
      note,
      canSend && ' ',
      canSend && h('button', { type: 'button', class: 'linkish', onclick: () => { cb.onDiscard(p.id); cb.onSubmit(p.text); } }, unsent ? 'Send it now' : 'Send again'),
      canDismiss && ' ',
      canDismiss && h('button', { type: 'button', class: 'linkish', onclick: () => { cb.onDiscard(p.id); } }, 'Dismiss'),
    ),
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

/** The heading over one earlier session's part of the conversation. */
export function historyHeading(session: string): HTMLElement {
  return h('p', { class: 'history-heading', role: 'article', 'data-session-id': session }, 'Earlier conversation (session ', h('a', { href: `#/session/${encodeURIComponent(session)}` }, session.slice(0, 8)), ')');
}
