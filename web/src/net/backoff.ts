// Reconnect delays: exponential backoff with jitter, so a server restart is
// not met by every tab reconnecting in the same millisecond.

/** Tuning for `backoffDelay`. */
export interface BackoffOptions {
  /** First delay, in ms. */
  readonly baseMs: number;
  /** Cap, in ms. */
  readonly maxMs: number;
  /** A number in [0, 1); injectable for tests. */
  readonly random: () => number;
}

/** The defaults: 0.5 s, doubling, at most 15 s. */
export const defaultBackoff: BackoffOptions = { baseMs: 500, maxMs: 15_000, random: Math.random };

/**
 * The delay before reconnect attempt `attempt` (0-based): "equal jitter",
 * half fixed and half random, so it never collapses to zero.
 */
export function backoffDelay(attempt: number, opts: BackoffOptions = defaultBackoff): number {
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * opts.random());
}
