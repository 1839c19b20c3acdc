// The stream poller's pace: quick while records may come, rare while the stack is idle.

/**
 * How long to sleep before the next poll: `idleMs` while something may be coming (within busyMs of a
 * handler's invocation or of records), then doubling up to `maxIdleMs`. A handler's invocation cuts a sleep
 * short, so a write is read at once, while an idle stack asks DynamoDB Local a few times a second, not 100.
 */
export class PollPacer {
  private busyUntil = 0;
  private pause: number;
  private wakeSleeper?: () => void;

  constructor(
    private readonly idleMs: number,
    private readonly maxIdleMs: number,
    /** How long after a wake polls stay quick: DynamoDB Local shows a write in GetRecords within ~35 ms. */
    private readonly busyMs = 2000,
  ) {
    // Nothing has happened yet: the longest pause, until the first wake.
    this.pause = maxIdleMs;
  }

  /** Something may have been written: poll at once and quickly for a while. */
  wake(): void {
    this.busyUntil = Date.now() + this.busyMs;
    this.pause = this.idleMs;
    this.wakeSleeper?.();
  }

  /** Sleeps after a round that read `got` records (none when got > 0 or while busy beyond idleMs). */
  async rest(got: number): Promise<void> {
    if (got > 0) return this.wake();
    const ms = Date.now() < this.busyUntil ? this.idleMs : this.pause;
    if (Date.now() >= this.busyUntil) this.pause = Math.min(this.pause * 2, this.maxIdleMs);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeSleeper = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeSleeper = undefined;
  }
}
