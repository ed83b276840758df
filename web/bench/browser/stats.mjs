// Small helpers for the browser benchmark's figures.

/** The q-quantile (0..1) of `xs`, nearest rank. */
export function quantile(xs, q) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/** p50, p99, mean and max of `xs`. */
export function summary(xs) {
  return { n: xs.length, p50: quantile(xs, 0.5), p99: quantile(xs, 0.99), mean: xs.reduce((a, x) => a + x, 0) / xs.length, max: Math.max(...xs) };
}

export const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Rejects after `ms` with `what`, unless `p` settles first. */
export function within(p, ms, what) {
  let timer;
  return Promise.race([p, new Promise((_, fail) => { timer = setTimeout(() => { fail(new Error(`${what}: no answer in ${ms} ms`)); }, ms); })]).finally(() => clearTimeout(timer));
}

/** 1-, 5- and 15-minute load averages. */
export async function loadAverage() {
  const { readFileSync } = await import('node:fs');
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
}

export const log = (...a) => { console.error(new Date().toISOString().slice(11, 19), ...a); };
