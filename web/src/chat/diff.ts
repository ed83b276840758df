// A line diff for file-edit tool cards (old_string → new_string). Inputs are
// edit snippets, usually small, so a plain LCS table is fine; past a size cap
// we show the old lines removed and the new ones added instead of spending
// seconds on the table.

/** One line of a diff. */
export interface DiffLine {
  readonly op: 'same' | 'add' | 'del';
  readonly text: string;
}

/** Above this many table cells the diff degrades to remove-all / add-all. */
const MAX_CELLS = 2_000_000;

/** Splits text into lines; a trailing newline does not make an empty last line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The line diff from `a` to `b`. */
export function diffLines(a: string, b: string): DiffLine[] {
  const x = splitLines(a);
  const y = splitLines(b);
  // Trim the common head and tail first: edits touch a few lines of many.
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  const xs = x.slice(head, x.length - tail);
  const ys = y.slice(head, y.length - tail);
  const out: DiffLine[] = x.slice(0, head).map((text) => ({ op: 'same', text }));
  out.push(...middle(xs, ys));
  out.push(...x.slice(x.length - tail).map((text): DiffLine => ({ op: 'same', text })));
  return out;
}

function middle(xs: string[], ys: string[]): DiffLine[] {
  const n = xs.length;
  const m = ys.length;
  if (n === 0 || m === 0 || n * m > MAX_CELLS) {
    return [...xs.map((text): DiffLine => ({ op: 'del', text })), ...ys.map((text): DiffLine => ({ op: 'add', text }))];
  }
  // lcs[i][j] = LCS length of xs[i..] and ys[j..], in one flat array.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = xs[i] === ys[j] ? (lcs[(i + 1) * w + j + 1] ?? 0) + 1 : Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    const xi = xs[i] ?? '';
    const yj = ys[j] ?? '';
    if (xi === yj) {
      out.push({ op: 'same', text: xi });
      i++;
      j++;
    } else if ((lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0)) {
      out.push({ op: 'del', text: xi });
      i++;
    } else {
      out.push({ op: 'add', text: yj });
      j++;
    }
  }
  for (; i < n; i++) out.push({ op: 'del', text: xs[i] ?? '' });
  for (; j < m; j++) out.push({ op: 'add', text: ys[j] ?? '' });
  return out;
}
