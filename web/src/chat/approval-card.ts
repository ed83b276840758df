// The approval card under a tool call: the agent's options as buttons, with
// keys (Enter allows, Escape denies, 1–9 pick), who may answer and why not,
// and the outcome once it is decided.
import type { ApprovalOption, ApprovalOptionKind } from '../generated/protocol';
import { canApprove } from '../ui/roles';
import { h } from '../ui/dom';
import type { ApprovalChoice, ChatCallbacks, ChatContext } from './callbacks';
import { chosenOption, isSentUnconfirmed, optionAllows, type ApprovalView, type ToolItem } from './state';

/** One button of an approval card. */
interface Choice {
  readonly label: string;
  readonly kind: ApprovalOptionKind;
  readonly choice: ApprovalChoice;
}

/** The approval block of `tool`'s card. */
export function approvalCard(cb: Pick<ChatCallbacks, 'onApprove'>, tool: ToolItem, a: ApprovalView, question: string, ctx: ChatContext, exited: boolean): HTMLElement {
  const chosen = chosenOption(a);
  if (a.state === 'pending') {
    const choices = choicesOf(a);
    const canAnswer = (ctx.channel?.approve ?? true) && !exited && canApprove(ctx.role);
    const busy = a.sending || !canAnswer;
    const firstAllow = choices.find((c) => kindAllows(c.kind));
    const firstReject = choices.find((c) => !kindAllows(c.kind));
    const keys = [firstAllow && 'Enter', firstReject && 'Escape', choices.length > 0 && `1…${choices.length}`].filter((k): k is string => typeof k === 'string');
    const pick = (c: Choice | undefined): void => {
      if (c && !busy) cb.onApprove(a.requestId, c.choice);
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

/** "Allowed in the browser", "Denied in the terminal (“No, and tell it why”)", "Allowed by policy “git”", "Abandoned …". */
export function outcomeText(a: ApprovalView, chosen: ApprovalOption | undefined): string {
  if (a.state === 'abandoned') return 'Abandoned: the agent stopped waiting for an answer.';
  const what = a.state === 'allowed' ? 'Allowed' : 'Denied';
  if (a.decidedBy === 'policy') {
    const why = a.state === 'denied' && a.reason !== undefined && a.reason !== '' ? `: ${a.reason}` : '.';
    return `${what} by policy “${a.decidedByName ?? ''}”${why}`;
  }
  // The main token (`owner`) is everyone on a one-person duet: name only the others.
  const by = a.decidedByName !== undefined && a.decidedByName !== '' && a.decidedByName !== 'owner' ? ` by ${a.decidedByName}` : '';
  const who = a.decidedBy === 'terminal' ? ' in the terminal' : a.decidedBy === 'client' ? `${by} in the browser` : a.decidedBy === 'notification' ? `${by} from a notification` : '';
  // The option's own words, unless they only repeat the outcome ("Allow", "Deny").
  const plain = chosen === undefined || /^(allow|yes|deny|no|reject)$/i.test(chosen.label.trim()) || (optionAllows(chosen) !== (a.state === 'allowed'));
  return `${what}${who}${plain ? '' : ` (“${chosen.label}”)`}.`;
}
