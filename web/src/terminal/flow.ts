// Flow control for terminal output. xterm.js parses writes asynchronously; a
// program that floods output can queue megabytes and freeze the tab. We count
// bytes handed to `term.write` whose callback has not fired yet; above the high
// watermark we ask the server to `pause` this client, below the low one to
// `resume`. The server replaces output it could not hold with a snapshot.

/** Watermarks in bytes. */
export interface Watermarks {
  readonly high: number;
  readonly low: number;
}

/** 512 KiB / 64 KiB: big enough for bursts, small enough to stay responsive. */
export const defaultWatermarks: Watermarks = { high: 512 * 1024, low: 64 * 1024 };

/** Counts unrendered bytes and says when to pause or resume. */
export class FlowControl {
  private pending = 0;
  private paused = false;
  private peak = 0;
  private pauses = 0;

  /** `signal(true)` means send `pause`, `signal(false)` means send `resume`. */
  constructor(
    private readonly signal: (pause: boolean) => void,
    private readonly marks: Watermarks = defaultWatermarks,
  ) {}

  /** Bytes handed to the terminal. */
  written(bytes: number): void {
    this.pending += bytes;
    this.peak = Math.max(this.peak, this.pending);
    if (!this.paused && this.pending > this.marks.high) {
      this.paused = true;
      this.pauses++;
      this.signal(true);
    }
  }

  /** Bytes the terminal finished with (the write callback fired). */
  rendered(bytes: number): void {
    this.pending = Math.max(0, this.pending - bytes);
    if (this.paused && this.pending < this.marks.low) {
      this.paused = false;
      this.signal(false);
    }
  }

  /**
   * A new connection starts unpaused on the server side; if the terminal is
   * still busy, pause the new one at once.
   */
  reconnected(): void {
    this.paused = false;
    if (this.pending > this.marks.high) {
      this.paused = true;
      this.signal(true);
    }
  }

  /** Bytes still queued in the terminal. */
  get backlog(): number {
    return this.pending;
  }

  /** The largest backlog seen and how often we paused (a debugging aid). */
  get stats(): { peak: number; pauses: number } {
    return { peak: this.peak, pauses: this.pauses };
  }

  /** Whether this client asked the server to pause. */
  get isPaused(): boolean {
    return this.paused;
  }
}
