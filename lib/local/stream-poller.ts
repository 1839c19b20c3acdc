// Reads DynamoDB Local's stream (DescribeStream / GetShardIterator / GetRecords, following new shards) and
// feeds each consumer the same DynamoDBStreamEvent Lambda would, after the same event filters. Each consumer
// has its own queue, honours batchItemFailures (retry from the first failed record, bounded, with backoff)
// and writes records it gave up on to a dead-letter file, as the SQS destination does on AWS.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { handlerLoader, invocationEndListeners } from './handlers';
import { PollPacer } from './poll-pacer';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { STREAM_DELIVERY, type StreamConsumerDef } from '../consumers';

/** The HTTP status of a refused stream call; 0 when no reply came (connection refused, timeout). */
export const refusalStatus = (err: unknown): number => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

/** Lambda event-filter semantics for the patterns we use: every key must match; leaves are lists of allowed values. */
export function matchesFilter(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern)) return pattern.some((p) => p === value);
  if (typeof pattern === 'object' && pattern !== null) {
    if (typeof value !== 'object' || value === null) return false;
    return Object.entries(pattern).every(([k, p]) => matchesFilter(p, (value as Record<string, unknown>)[k]));
  }
  return pattern === value;
}

/**
 * DynamoDB Local's stream drops the type of an empty map (`{}` where DynamoDB sends `{"M":{}}`); put it back
 * so handlers see what Lambda would give them.
 */
function repairImage(image: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!image) return image;
  const fix = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const av = v as Record<string, unknown>;
    if (Object.keys(av).length === 0) return { M: {} };
    if (av.M) return { M: repairImage(av.M as Record<string, unknown>) };
    if (Array.isArray(av.L)) return { L: av.L.map(fix) };
    return av;
  };
  return Object.fromEntries(Object.entries(image).map(([k, v]) => [k, fix(v)]));
}

export function toLambdaRecord(r: StreamRecord, streamArn: string, region: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  // The SDK gives the creation time as a Date; Lambda's event carries epoch seconds.
  const created = d.ApproximateCreationDateTime?.getTime();
  return {
    eventID: r.eventID,
    eventName: r.eventName as DynamoDBRecord['eventName'],
    eventVersion: r.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: created ? Math.floor(created / 1000) : undefined,
      Keys: d.Keys as never,
      NewImage: repairImage(d.NewImage) as never,
      OldImage: repairImage(d.OldImage) as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType as never,
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class ConsumerQueue {
  private pending: DynamoDBRecord[] = [];
  private running = false;
  private handler?: Promise<StreamHandler>;

  constructor(
    private readonly def: StreamConsumerDef,
    private readonly root: string,
    private readonly deadLetterDir: string,
    private readonly log: (line: string) => void,
  ) {}

  offer(records: DynamoDBRecord[]): void {
    const mine = records.filter((r) => this.def.filters.some((f) => matchesFilter(f, r)));
    if (mine.length === 0) return;
    this.pending.push(...mine);
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
        let batch = this.pending.splice(0, this.def.batchSize);
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
      }
    } finally {
      // Set in the same turn as the loop's last check: a record offered after it starts a new drain.
      this.running = false;
    }
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

export interface StreamPollerOptions {
  endpoint: string;
  region: string;
  tableName: string;
  root: string;
  consumers: StreamConsumerDef[];
  deadLetterDir: string;
  log: (line: string) => void;
  /** Pause between polls while records may be coming (after a handler ran, after records). */
  idleMs?: number;
  /** The longest pause once nothing has happened for a while: an idle stack polls this rarely. */
  maxIdleMs?: number;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

export async function startStreamPoller(o: StreamPollerOptions): Promise<StreamPoller> {
  // DynamoDB Local wants credentials naming an access key; it does not check the signature.
  const clientConfig = { endpoint: o.endpoint, region: o.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const ddb = new DynamoDBClient(clientConfig);
  // The loop below retries on its own: one attempt per call, bounded.
  const streams = new DynamoDBStreamsClient({ ...clientConfig, maxAttempts: 1, requestHandler: { connectionTimeout: 2000, requestTimeout: 10_000, throwOnRequestTimeout: true } });
  const table = await ddb.send(new DescribeTableCommand({ TableName: o.tableName }));
  ddb.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${o.tableName} has no stream`);
  const queues = o.consumers.map((c) => new ConsumerQueue(c, o.root, o.deadLetterDir, o.log));
  const pacer = new PollPacer(o.idleMs ?? 10, o.maxIdleMs ?? 1000);
  const wake = () => pacer.wake();
  invocationEndListeners.add(wake);
  pacer.wake(); // start-up: whatever the stack does first is read at once

  let stopped = false;
  const known = new Set<string>();
  const iterators = new Map<string, string>();
  /** Last sequence number handed to the consumers, per shard: a lost iterator resumes right after it. */
  const lastSeq = new Map<string, string>();

  const discover = async (initial: boolean) => {
    let start: string | undefined;
    do {
      const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: start }));
      for (const shard of out.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId;
        if (!id || known.has(id)) continue;
        known.add(id);
        const closed = Boolean(shard.SequenceNumberRange?.EndingSequenceNumber);
        // At start-up only new events matter; a shard that appears later is read from its beginning.
        if (initial && closed) continue;
        const it = await streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ShardIteratorType: initial ? 'LATEST' : 'TRIM_HORIZON' }),
        );
        if (it.ShardIterator) iterators.set(id, it.ShardIterator);
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  await discover(true);
  const loop = (async () => {
    let sinceDiscover = 0;
    while (!stopped) {
      let got = 0;
      for (const [shardId, iterator] of [...iterators]) {
        try {
          const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
          const records = (out.Records ?? []).map((r) => toLambdaRecord(r, streamArn, o.region));
          got += records.length;
          if (records.length) lastSeq.set(shardId, records[records.length - 1].dynamodb?.SequenceNumber as string);
          for (const q of queues) q.offer(records);
          if (out.NextShardIterator) iterators.set(shardId, out.NextShardIterator);
          else iterators.delete(shardId); // the shard closed: its children are found by discover()
        } catch (err) {
          if (stopped) return;
          o.log(`stream poller: ${(err as Error).name}: ${(err as Error).message}; resuming the shard`);
          await sleep(500);
          // A read that failed on the way (timeout, connection, 5xx) leaves its iterator usable: the same
          // records are asked for again. An iterator refused (4xx: expired, trimmed, unknown) is replaced, right
          // after the last record handed on, or from the shard's start when none was yet (records may then
          // come twice, never not at all; LATEST would skip what came meanwhile).
          const status = refusalStatus(err);
          if (status < 400 || status >= 500) continue;
          const seq = lastSeq.get(shardId);
          const it = await streams
            .send(
              new GetShardIteratorCommand({
                StreamArn: streamArn,
                ShardId: shardId,
                ...(seq ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: seq } : { ShardIteratorType: 'TRIM_HORIZON' }),
              }),
            )
            .catch(() => undefined);
          if (it?.ShardIterator) iterators.set(shardId, it.ShardIterator);
        }
      }
      // No open shard yet (a table just made): look for one on every round, not every hundredth.
      if (++sinceDiscover >= 100 || iterators.size === 0) {
        sinceDiscover = 0;
        await discover(false).catch((err) => !stopped && o.log(`stream poller: ${(err as Error).message}`));
      }
      await pacer.rest(got);
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      invocationEndListeners.delete(wake);
      pacer.wake();
      await loop;
      streams.destroy();
    },
  };
}
