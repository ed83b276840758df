// Seeking, as pure functions: which recording frames and which events
// belong to an instant, what a terminal must be fed to get there from where
// it is, the chat state at an event count (with checkpoints, so a seek back
// in a long session does not reduce it all again), and the play clock.
import type { ServerMessage } from '../generated/protocol';
import { initialChatState, reduce, type ChatState } from '../chat/state';
import type { CastFrame } from './cast';

/** An `event` message with its receive time (`at`, ms on the recording's clock). */
export type TimedEvent = Extract<ServerMessage, { type: 'event' }>;

/** How many items of a sorted list have their time at or before `t`. */
function countUpTo<T>(items: readonly T[], t: number, time: (x: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (time(items[mid] as T) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** How many frames have happened by `t` seconds. */
export function framesUpTo(frames: readonly CastFrame[], t: number): number {
  return countUpTo(frames, t, (f) => f.t);
}

/** How many events duet had received by `t` seconds (an event without a time counts as at 0). */
export function eventsUpTo(events: readonly TimedEvent[], t: number): number {
  return countUpTo(events, t * 1000, (e) => e.at ?? 0);
}

/** Events sorted by receive time (they arrive in seq order, whose times never fall; this keeps a bad file from breaking the bisect). */
export function sortEvents(events: readonly TimedEvent[]): TimedEvent[] {
  return [...events].sort((a, b) => (a.at ?? 0) - (b.at ?? 0) || a.seq - b.seq);
}

/** The end of the replay in seconds: the later of the last frame and the last event. */
export function replayEnd(frames: readonly CastFrame[], events: readonly TimedEvent[]): number {
  const lastFrame = frames.at(-1)?.t ?? 0;
  const lastEvent = (events.at(-1)?.at ?? 0) / 1000;
  return Math.max(lastFrame, lastEvent);
}

/** What a terminal that has been fed `fed` frames needs to show `target` frames. */
export interface FeedPlan {
  /** Start over (a fresh screen at the header's size) before feeding. */
  readonly reset: boolean;
  readonly from: number;
  readonly to: number;
}

/** Forward: feed only what is new. Backward: a terminal cannot unprint, so reset and feed from the start. */
export function planFeed(fed: number, target: number): FeedPlan {
  return target >= fed ? { reset: false, from: fed, to: target } : { reset: true, from: 0, to: target };
}

/** Chat states are immutable: one kept every this many events makes any seek cost at most this many reductions past a checkpoint. */
const CHECKPOINT_EVERY = 256;

/** The chat at any event count, reduced forward from the nearest checkpoint. */
export class ChatTimeline {
  private readonly checkpoints: ChatState[] = [initialChatState];
  private state: ChatState = initialChatState;
  private count = 0;

  constructor(private readonly events: readonly TimedEvent[]) {}

  /** The chat after the first `n` events. */
  at(n: number): ChatState {
    const target = Math.max(0, Math.min(n, this.events.length));
    if (target < this.count) {
      const k = Math.floor(target / CHECKPOINT_EVERY);
      this.state = this.checkpoints[k] ?? initialChatState;
      this.count = k * CHECKPOINT_EVERY;
    }
    while (this.count < target) {
      const e = this.events[this.count];
      if (e) this.state = reduce(this.state, e);
      this.count++;
      if (this.count % CHECKPOINT_EVERY === 0) this.checkpoints[this.count / CHECKPOINT_EVERY] = this.state;
    }
    return this.state;
  }
}

/** Speeds the player offers. */
export const SPEEDS = [1, 2, 4, 8] as const;

/** Where playback is after `elapsedMs` of wall time at `speed`, from `pos` seconds; never past `end`. */
export function advance(pos: number, speed: number, elapsedMs: number, end: number): number {
  return Math.min(end, pos + (Math.max(0, elapsedMs) * speed) / 1000);
}

/** `m:ss.s` (or `h:mm:ss`) for the time display. */
export function formatTime(seconds: number): string {
  const s = Math.max(0, seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${String(h)}:${String(m).padStart(2, '0')}:${String(Math.floor(sec)).padStart(2, '0')}`;
  return `${String(m)}:${sec.toFixed(1).padStart(4, '0')}`;
}
