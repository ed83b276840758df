import { describe, expect, it } from 'vitest';
import { budgetLine, compact, money, usageDetail, usageLine } from '../src/chat/usage';
import type { UsageTotals } from '../src/generated/protocol';

const totals: UsageTotals = {
  turns: 2,
  tokens: { input: 11_000, output: 1_350, cache_read: 0, cache_write: 20 },
  cost: 0.00154,
  currency: 'USD',
  busy_ms: 12_400,
  api_ms: 9_000,
  tool_calls: 3,
  tool_errors: 1,
  context: { used: 5_000, size: 200_000 },
};

describe('usage in words', () => {
  it('sums tokens in and out, names cost and turns', () => {
    expect(usageLine(totals)).toBe('12k tokens · $0.0015 · 2 turns');
    const free: UsageTotals = { ...totals };
    delete free.cost;
    expect(usageLine({ ...free, turns: 1, tokens: { input: 10, output: 5, cache_read: 0, cache_write: 0 } })).toBe('15 tokens · 1 turn');
    expect(usageLine(undefined)).toBe('');
  });
  it('tells every figure in the tooltip', () => {
    expect(usageDetail(totals)).toContain('Tool calls 3 (1 failed)');
    expect(usageDetail(totals)).toContain('Context 5.0k of 200k tokens');
    expect(usageDetail(totals)).toContain('working 12 s (API 9 s)');
  });
  it('formats numbers and money', () => {
    expect(compact(999)).toBe('999');
    expect(compact(1_500)).toBe('1.5k');
    expect(compact(2_500_000)).toBe('2.5M');
    expect(money(12.5, 'EUR')).toBe('12.50 EUR');
    expect(budgetLine({ limits: { turns: 3 }, exhausted: 'the budget of 3 turns is spent' })).toBe('Budget spent: the budget of 3 turns is spent');
    expect(budgetLine({ limits: { turns: 3 } })).toBe('');
  });
});
