// One stream consumer in the local stack: the records of its shards in order, its event filters, its batches
// (batch size and batching window from its declaration, one shard's records each, one batch at a time) run by the
// event-source runner (event-source.ts: partial failures, bisect, retries, on-failure destination), and its
// checkpoint moved after each batch.
import type { DynamoDBRecord } from 'aws-lambda';
import { STREAM_DELIVERY, type StreamConsumerDef } from '../consumers';
import { EventSource, type StreamPolicy } from './event-source';
import type { DeadLetters } from './dead-letters';
import { matchesFilter } from './stream-records';
import { seqAfter, type StreamCheckpoints } from './stream-checkpoints';

/** A record as read from its shard; `mine` when it passes the consumer's filters. */
interface Entry {
  record: DynamoDBRecord;
  shard: string;
  mine: boolean;
  /** When it was read: the batching window counts from the first record waiting. */
  readAt: number;
}

/** The mapping's settings for a consumer: STREAM_DELIVERY, as CDK declares it (lib/stack-functions.ts). */
export const streamPolicy = (): StreamPolicy => ({
  retryAttempts: STREAM_DELIVERY.retryAttempts,
  maxRecordAgeSeconds: STREAM_DELIVERY.maxRecordAgeSeconds,
  bisectBatchOnFunctionError: STREAM_DELIVERY.bisectBatchOnFunctionError,
});

export class ConsumerQueue {
  private pending: Entry[] = [];
  private running = false;
  private readonly source: EventSource;
  /** Cuts a batching window short: the stack stops, or a batch is full. */
  private wakeWindow?: () => void;
  private stopped = false;

  constructor(
    private readonly def: StreamConsumerDef,
    root: string,
    deadLetters: DeadLetters,
    private readonly checkpoints: StreamCheckpoints,
    log: (line: string) => void,
    private readonly policy: StreamPolicy = streamPolicy(),
  ) {
    this.source = new EventSource(def, root, deadLetters, log);
  }

  /**
   * Every record read from the shard, in order. Those the filters leave out are queued too, untouched: once the
   * records before them are done, the consumer's checkpoint moves past them. Records at or below the
   * consumer's own checkpoint (read again for a slower consumer after a restart) are done already.
   */
  offer(records: DynamoDBRecord[], shard: string): void {
    const done = this.checkpoints.of(this.def.id, shard);
    const fresh = done === undefined ? records : records.filter((r) => seqAfter(r.dynamodb?.SequenceNumber as string, done));
    if (fresh.length === 0) return;
    const readAt = Date.now();
    this.pending.push(...fresh.map((record) => ({ record, shard, mine: this.def.filters.some((f) => matchesFilter(f, record)), readAt })));
    if (this.mineWaiting() >= this.def.batchSize) this.wakeWindow?.();
    if (!this.running) void this.drain();
  }

  /** Ends a batching window at once (the stack is stopping); the batch in hand still runs. */
  stop(): void {
    this.stopped = true;
    this.wakeWindow?.();
  }

  private mineWaiting(): number {
    return this.pending.reduce((n, e) => n + (e.mine ? 1 : 0), 0);
  }

  /**
   * The batching window: with fewer records than a batch waiting, wait until the first of them has waited the
   * window (MaximumBatchingWindowInSeconds). A window of 0 (the default) invokes at once.
   */
  private async batchingWindow(): Promise<void> {
    const windowMs = (this.def.batchingWindowSeconds ?? 0) * 1000;
    const first = this.pending.find((e) => e.mine);
    if (!windowMs || !first || this.stopped || this.mineWaiting() >= this.def.batchSize) return;
    const left = first.readAt + windowMs - Date.now();
    if (left <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      this.wakeWindow = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeWindow = undefined;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.length) {
        await this.batchingWindow();
        const taken = this.take();
        const shard = taken[0].shard;
        const batch = taken.filter((e) => e.mine).map((e) => e.record);
        if (batch.length) await this.source.runStreamBatch(batch, shard, this.def.id, this.policy);
        // Handled or dead-lettered, every record taken: a restart resumes after them.
        this.checkpoints.advance(this.def.id, new Map([[shard, taken[taken.length - 1].record.dynamodb?.SequenceNumber as string]]));
      }
    } finally {
      // Set in the same turn as the loop's last check: a record offered after it starts a new drain.
      this.running = false;
    }
  }

  /**
   * The next batch: up to batchSize records of one shard for the handler, with the records left out between
   * them. Shards are taken one after another, in the order they were read (a child shard after its parent).
   */
  private take(): Entry[] {
    const shard = this.pending[0].shard;
    let mine = 0;
    let n = 0;
    while (n < this.pending.length && this.pending[n].shard === shard && (mine < this.def.batchSize || !this.pending[n].mine)) {
      if (this.pending[n].mine) mine++;
      n++;
    }
    return this.pending.splice(0, n);
  }
}
