// The board's budget control: a session's limits, and for an owner a small
// form to raise them (PUT /api/sessions/{id}/budget). A session whose budget
// is spent holds its next prompt until then; the server lets it go as soon
// as no limit is reached.
import type { Budget, BudgetStatus } from '../generated/protocol';
import { api, ApiError } from '../net/api';
import { h } from './dom';

/** The limits a form edits, with their labels. */
const FIELDS = [
  ['turns', 'Turns'],
  ['tokens', 'Tokens'],
  ['cost', 'Cost'],
  ['wall_secs', 'Working time (s)'],
] as const;

/** What a raise suggests: twice each limit that is set. */
export function raised(limits: Budget): Budget {
  const out: { -readonly [K in keyof Budget]: Budget[K] } = {};
  if (limits.turns !== undefined) out.turns = limits.turns * 2;
  if (limits.tokens !== undefined) out.tokens = limits.tokens * 2;
  if (limits.cost !== undefined) out.cost = limits.cost * 2;
  if (limits.wall_secs !== undefined) out.wall_secs = limits.wall_secs * 2;
  if (limits.interrupt !== undefined) out.interrupt = limits.interrupt;
  return out;
}

/** The budget's limits in words: "3 turns · 10000 tokens". */
export function limitsText(limits: Budget): string {
  const parts: string[] = [];
  if (limits.turns !== undefined) parts.push(`${limits.turns} turns`);
  if (limits.tokens !== undefined) parts.push(`${limits.tokens} tokens`);
  if (limits.cost !== undefined) parts.push(`cost ${limits.cost}`);
  if (limits.wall_secs !== undefined) parts.push(`${limits.wall_secs} s working`);
  return parts.join(' · ');
}

/**
 * The board card's budget line: the limits, why prompts wait when the budget
 * is spent, and (for an owner) "Raise budget", which opens a form with each
 * limit doubled; `done` redraws after a change or an error.
 */
export function budgetBlock(session: string, status: BudgetStatus, canRaise: boolean, done: (error?: string) => void): HTMLElement {
  const spent = status.exhausted !== undefined;
  const form = h('form', { class: 'budget-form', hidden: true, 'aria-label': 'Raise the budget' });
  const proposal = raised(status.limits);
  const inputs = FIELDS.filter(([key]) => status.limits[key] !== undefined).map(([key, label]) => {
    const input = h('input', { type: 'number', min: '0', step: key === 'cost' ? 'any' : '1', name: key, value: String(proposal[key] ?? '') });
    return { key, el: h('label', {}, `${label} `, input), input };
  });
  form.append(
    ...inputs.map((i) => i.el),
    h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save'),
  );
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const next: { -readonly [K in keyof Budget]: Budget[K] } = {};
    if (status.limits.interrupt !== undefined) next.interrupt = status.limits.interrupt;
    for (const { key, input } of inputs) {
      const v = Number(input.value);
      if (input.value !== '' && Number.isFinite(v) && v > 0) next[key] = v;
    }
    api.setBudget(session, next).then(
      () => { form.hidden = true; done(); },
      (err: unknown) => { done(err instanceof ApiError ? err.message : String(err)); },
    );
  });
  const open = h('button', { type: 'button', class: 'btn btn-quiet budget-raise', onclick: () => { form.hidden = !form.hidden; } }, 'Raise budget');
  return h(
    'div',
    { class: `board-budget${spent ? ' budget-spent' : ''}`, 'data-budget': spent ? 'spent' : 'ok' },
    h('span', { class: 'budget-text' }, spent ? `Budget spent: ${status.exhausted ?? ''} — prompts wait` : `Budget: ${limitsText(status.limits)}`),
    canRaise && open,
    canRaise && form,
  );
}
