// The terminal recording (asciicast v2, `GET .../recording`) parsed for
// replay: the header's size and the output and resize frames in time order.
// A recording is written by duet, but it is still a file: a bad frame line
// is skipped and counted, a bad header is an error, nothing throws later.

/** The header fields replay needs. */
export interface CastHeader {
  readonly width: number;
  readonly height: number;
  /** Unix seconds when the recording began (informative only: times are offsets). */
  readonly timestamp?: number;
}

/** One frame: output text or a resize, at `t` seconds from the start. */
export interface CastFrame {
  readonly t: number;
  readonly kind: 'o' | 'r';
  readonly data: string;
}

/** A parsed recording. */
export interface Cast {
  readonly header: CastHeader;
  readonly frames: readonly CastFrame[];
  /** Lines that were not a frame (not JSON, wrong shape). */
  readonly skipped: number;
}

/** The recording could not be read at all. */
export class CastError extends Error {}

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 10_000 ? v : undefined;
}

/** Parses an asciicast v2 file. Times never go backwards (a frame earlier than the one before it is moved up to it), so a seek can bisect. */
export function parseCast(text: string): Cast {
  const lines = text.split('\n');
  let header: unknown;
  try {
    header = JSON.parse(lines[0] ?? '');
  } catch {
    throw new CastError('the recording has no header line');
  }
  if (typeof header !== 'object' || header === null || (header as { version?: unknown }).version !== 2) {
    throw new CastError('the recording is not asciicast version 2');
  }
  const hd = header as { width?: unknown; height?: unknown; timestamp?: unknown };
  const width = positiveInt(hd.width);
  const height = positiveInt(hd.height);
  if (width === undefined || height === undefined) throw new CastError('the recording has no terminal size');
  const frames: CastFrame[] = [];
  let skipped = 0;
  let last = 0;
  for (const line of lines.slice(1)) {
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    if (!Array.isArray(v) || v.length < 3 || typeof v[0] !== 'number' || !Number.isFinite(v[0]) || typeof v[2] !== 'string') {
      skipped++;
      continue;
    }
    const kind: unknown = v[1];
    // Input ("i") and marker ("m") frames change nothing on screen.
    if (kind !== 'o' && kind !== 'r') continue;
    last = Math.max(last, v[0]);
    frames.push({ t: last, kind, data: v[2] });
  }
  const timestamp = typeof hd.timestamp === 'number' ? hd.timestamp : undefined;
  return { header: timestamp === undefined ? { width, height } : { width, height, timestamp }, frames, skipped };
}

/** A resize frame's size, or undefined when its data is not `COLSxROWS`. */
export function resizeOf(f: CastFrame): { cols: number; rows: number } | undefined {
  const m = /^(\d+)x(\d+)$/.exec(f.data);
  const cols = positiveInt(Number(m?.[1]));
  const rows = positiveInt(Number(m?.[2]));
  return cols !== undefined && rows !== undefined ? { cols, rows } : undefined;
}
