// One stream consumer's queue in the local stack: the records of its shards in order, its event filters, its
// handler invoked as Lambda's event source mapping does (batchItemFailures: retry from the first failed record,
// bounded, with backoff; then the record to a dead-letter file), and its checkpoint moved after each batch.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { handlerLoader } from './handlers';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { STREAM_DELIVERY, type StreamConsumerDef } from '../consumers';
import { matchesFilter } from './stream-records';
import { seqAfter, type StreamCheckpoints } from './stream-checkpoints';

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A record as read from its shard; `mine` when it passes the consumer's filters. */
interface Entry {
  record: DynamoDBRecord;
  shard: string;
  mine: boolean;
}

export class ConsumerQueue {
  private pending: Entry[] = [];
  private running = false;
  private handler?: Promise<StreamHandler>;

  constructor(
    private readonly def: StreamConsumerDef,
    private readonly root: string,
    private readonly deadLetterDir: string,
    private readonly checkpoints: StreamCheckpoints,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Every record read from the shard, in order. Those the filters leave out are queued too, untouched: once the
   * records before them are done, the consumer's checkpoint moves past them. Records at or below the
   * consumer's own checkpoint (read again for a slower consumer after a restart) are done already.
   */
  offer(records: DynamoDBRecord[], shard: string): void {
    const done = this.checkpoints.of(this.def.id, shard);
    const fresh = done === undefined ? records : records.filter((r) => seqAfter(r.dynamodb?.SequenceNumber as string, done));
    if (fresh.length === 0) return;
    this.pending.push(...fresh.map((record) => ({ record, shard, mine: this.def.filters.some((f) => matchesFilter(f, record)) })));
    if (!this.running) void this.drain();
  }

  private load(): Promise<StreamHandler> {
    this.handler ??= handlerLoader<StreamHandler>(this.root)(this.def.entry);
    return this.handler;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.length) {
        const taken = this.take();
        let batch = taken.filter((e) => e.mine).map((e) => e.record);
        for (let attempt = 0; batch.length; attempt++) {
          const failedAt = await this.invoke(batch);
          if (failedAt < 0) break;
          batch = batch.slice(failedAt);
          const tooOld = batch[0].dynamodb?.ApproximateCreationDateTime
            ? Date.now() / 1000 - batch[0].dynamodb.ApproximateCreationDateTime > STREAM_DELIVERY.maxRecordAgeSeconds
            : false;
          if (attempt >= STREAM_DELIVERY.retryAttempts || tooOld) {
            // Like bisect-on-error + on-failure destination: give up on the failing record only.
            this.deadLetter(batch[0]);
            batch = batch.slice(1);
            attempt = -1;
            continue;
          }
          await sleep(Math.min(100 * 2 ** attempt, 2000));
        }
        // Handled or dead-lettered, every record taken: a restart resumes after them.
        this.checkpoints.advance(this.def.id, new Map(taken.map((e) => [e.shard, e.record.dynamodb?.SequenceNumber as string])));
      }
    } finally {
      // Set in the same turn as the loop's last check: a record offered after it starts a new drain.
      this.running = false;
    }
  }

  /** The next batch: up to batchSize records for the handler, with the records left out between them. */
  private take(): Entry[] {
    let mine = 0;
    let n = 0;
    while (n < this.pending.length && (mine < this.def.batchSize || !this.pending[n].mine)) {
      if (this.pending[n].mine) mine++;
      n++;
    }
    return this.pending.splice(0, n);
  }

  /** Index of the first record to retry, or -1 when the whole batch is done. */
  private async invoke(batch: DynamoDBRecord[]): Promise<number> {
    try {
      const res = await (await this.load())({ Records: batch });
      const failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      if (failed.size === 0) return -1;
      const index = batch.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? ''));
      return index < 0 ? 0 : index; // an unknown identifier fails the whole batch, as Lambda does
    } catch (err) {
      this.log(`${this.def.id}: handler threw (${(err as Error).message}); retrying the batch`);
      return 0;
    }
  }

  private deadLetter(record: DynamoDBRecord): void {
    mkdirSync(this.deadLetterDir, { recursive: true });
    const file = join(this.deadLetterDir, `${this.def.id}.jsonl`);
    appendFileSync(file, JSON.stringify({ at: new Date().toISOString(), consumer: this.def.id, record }) + '\n');
    this.log(`${this.def.id}: gave up on record ${record.dynamodb?.SequenceNumber} after ${STREAM_DELIVERY.retryAttempts} retries; written to ${file}`);
  }
}
