// What the agent spent, in words for the chat's status line and the board:
// tokens, cost, turns, and why prompts are held once a budget is spent.
// Pure, so it is tested without a page.
import type { BudgetStatus, UsageTotals } from '../generated/protocol';

/** 950, "12.3k", "4.1M". */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** "$0.0123", "0.50 EUR". */
export function money(amount: number, currency: string | undefined): string {
  const digits = amount < 1 ? 4 : 2;
  return currency === undefined || currency === 'USD' ? `$${amount.toFixed(digits)}` : `${amount.toFixed(digits)} ${currency}`;
}

/** "12.3k tokens · $0.0123 · 3 turns" (what is known). */
export function usageLine(u: UsageTotals | undefined): string {
  if (!u) return '';
  const tokens = u.tokens.input + u.tokens.output;
  const parts = [`${compact(tokens)} tokens`];
  if (u.cost !== undefined) parts.push(money(u.cost, u.currency));
  parts.push(`${u.turns} turn${u.turns === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

/** The tooltip: every figure. */
export function usageDetail(u: UsageTotals | undefined): string {
  if (!u) return '';
  const t = u.tokens;
  const lines = [
    `Tokens in ${t.input}, out ${t.output}, cache read ${t.cache_read}, cache write ${t.cache_write}`,
    `Turns ${u.turns}, working ${Math.round(u.busy_ms / 1000)} s${u.api_ms !== undefined ? ` (API ${Math.round(u.api_ms / 1000)} s)` : ''}`,
    `Tool calls ${u.tool_calls}${u.tool_errors > 0 ? ` (${u.tool_errors} failed)` : ''}`,
  ];
  if (u.cost !== undefined) lines.push(`Cost ${money(u.cost, u.currency)}`);
  if (u.context) lines.push(`Context ${compact(u.context.used)}${u.context.size !== undefined ? ` of ${compact(u.context.size)}` : ''} tokens`);
  return lines.join('\n');
}

/** "Budget spent: the budget of 3 turns is spent", or nothing. */
export function budgetLine(b: BudgetStatus | undefined): string {
  return b?.exhausted !== undefined ? `Budget spent: ${b.exhausted}` : '';
}
