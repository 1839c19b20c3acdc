// Reads DynamoDB Local's stream (DescribeStream / GetShardIterator / GetRecords, following new shards) and
// feeds each consumer the same DynamoDBStreamEvent Lambda would, after the same event filters. Each consumer
// has its own queue, honours batchItemFailures (retry from the first failed record, bounded, with backoff)
// and writes records it gave up on to a dead-letter file, as the SQS destination does on AWS.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { handlerLoader } from './handlers';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { http1 } from '../../lambdas/core/http1';
import { awsJsonError } from '../../lambdas/core/aws-http';
import { STREAM_DELIVERY, type StreamConsumerDef } from '../routes';

/** A stream record as DynamoDB Streams' JSON API returns it. */
export interface StreamRecord {
  eventID?: string;
  eventName?: string;
  eventVersion?: string;
  dynamodb?: {
    /** Epoch seconds. */
    ApproximateCreationDateTime?: number;
    Keys?: Record<string, AttributeValue>;
    NewImage?: Record<string, AttributeValue>;
    OldImage?: Record<string, AttributeValue>;
    SequenceNumber?: string;
    SizeBytes?: number;
    StreamViewType?: string;
  };
}

interface Shard {
  ShardId: string;
  SequenceNumberRange?: { EndingSequenceNumber?: string };
}

/** A refused stream call; `status` 0 when no reply came (connection, timeout). */
export class StreamsCallError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * One DynamoDB Streams call to DynamoDB Local, without the SDK's client: that cost ~1.7 ms of CPU per empty
 * GetRecords, and the poller asks ~90 times a second (15% of a core with the stack idle). DynamoDB Local
 * wants an Authorization header naming an access key; it does not check the signature.
 */
export async function streamsCall<T>(endpoint: URL, region: string, op: 'DescribeStream' | 'GetShardIterator' | 'GetRecords', input: object): Promise<T> {
  const headers = {
    host: endpoint.host,
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `DynamoDBStreams_20120810.${op}`,
    authorization: `AWS4-HMAC-SHA256 Credential=local/20200101/${region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0`,
  };
  const reply = await http1('POST', endpoint, headers, JSON.stringify(input), 10_000).catch((err: Error) => {
    throw new StreamsCallError(`${op}: ${err.message}`, 0);
  });
  const text = reply.body.toString('utf8');
  if (reply.status === 200) return JSON.parse(text) as T;
  const error = awsJsonError(reply.status, text);
  throw new StreamsCallError(`${op}: ${error.type}: ${error.message}`, reply.status);
}

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
  return {
    eventID: r.eventID,
    eventName: r.eventName as DynamoDBRecord['eventName'],
    eventVersion: r.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime: d.ApproximateCreationDateTime ? Math.floor(d.ApproximateCreationDateTime) : undefined,
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
  /** Callers of idle(), woken when the queue runs dry. */
  private waiters: (() => void)[] = [];
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

  /** Resolves once the records handed over so far are handled. */
  idle(): Promise<void> {
    return this.running ? new Promise((r) => this.waiters.push(r)) : Promise.resolve();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.pending.length) {
        let batch = this.pending.splice(0, STREAM_DELIVERY.batchSize);
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
      for (const wake of this.waiters.splice(0)) wake();
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
  /** Pause between polls of a shard that returned nothing. */
  idleMs?: number;
}

export interface StreamPoller {
  /**
   * Stops reading the stream (records keep accumulating in it) until resume(); resolves once no read or
   * consumer is in flight. For the benchmark's handler overhead: on AWS, stream reads and consumers run apart
   * from the table's requests; here they would share the thread and DynamoDB Local with the handler timed.
   */
  pause(): Promise<void>;
  /** Reads on from where it paused: nothing written meanwhile is skipped. */
  resume(): void;
  stop(): Promise<void>;
}

export async function startStreamPoller(o: StreamPollerOptions): Promise<StreamPoller> {
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const ddb = new DynamoDBClient({ endpoint: o.endpoint, region: o.region, credentials });
  const endpoint = new URL(o.endpoint);
  const streams = <T>(op: Parameters<typeof streamsCall>[2], input: object) => streamsCall<T>(endpoint, o.region, op, input);
  const table = await ddb.send(new DescribeTableCommand({ TableName: o.tableName }));
  ddb.destroy();
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${o.tableName} has no stream`);
  const queues = o.consumers.map((c) => new ConsumerQueue(c, o.root, o.deadLetterDir, o.log));
  const idleMs = o.idleMs ?? 10;

  let stopped = false;
  let paused: { resume: Promise<void>; wake: () => void } | undefined;
  let reading = Promise.resolve();
  const known = new Set<string>();
  const iterators = new Map<string, string>();
  /** Last sequence number handed to the consumers, per shard: a lost iterator resumes right after it. */
  const lastSeq = new Map<string, string>();

  const discover = async (initial: boolean) => {
    let start: string | undefined;
    do {
      const out = await streams<{ StreamDescription?: { Shards?: Shard[]; LastEvaluatedShardId?: string } }>('DescribeStream', {
        StreamArn: streamArn,
        ExclusiveStartShardId: start,
      });
      for (const shard of out.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId;
        if (known.has(id)) continue;
        known.add(id);
        const closed = Boolean(shard.SequenceNumberRange?.EndingSequenceNumber);
        // At start-up only new events matter; a shard that appears later is read from its beginning.
        if (initial && closed) continue;
        const it = await streams<{ ShardIterator?: string }>('GetShardIterator', {
          StreamArn: streamArn,
          ShardId: id,
          ShardIteratorType: initial ? 'LATEST' : 'TRIM_HORIZON',
        });
        if (it.ShardIterator) iterators.set(id, it.ShardIterator);
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  await discover(true);
  const loop = (async () => {
    let sinceDiscover = 0;
    while (!stopped) {
      if (paused) {
        await paused.resume;
        continue;
      }
      let got = 0;
      let doneReading!: () => void;
      reading = new Promise((r) => (doneReading = r));
      try {
        for (const [shardId, iterator] of [...iterators]) {
          try {
            const out = await streams<{ Records?: StreamRecord[]; NextShardIterator?: string }>('GetRecords', { ShardIterator: iterator, Limit: 1000 });
            const records = (out.Records ?? []).map((r) => toLambdaRecord(r, streamArn, o.region));
            got += records.length;
            if (records.length) lastSeq.set(shardId, records[records.length - 1].dynamodb?.SequenceNumber as string);
            for (const q of queues) q.offer(records);
            if (out.NextShardIterator) iterators.set(shardId, out.NextShardIterator);
            else iterators.delete(shardId); // the shard closed: its children are found by discover()
          } catch (err) {
            if (stopped) return;
            o.log(`stream poller: ${(err as Error).message}; resuming the shard`);
            await sleep(500);
            // A read that failed on the way (timeout, connection, 5xx) leaves its iterator usable: the same
            // records are asked for again. An iterator refused (4xx: expired, trimmed, unknown) is replaced, right
            // after the last record handed on, or from the shard's start when none was yet (records may then
            // come twice, never not at all; LATEST would skip what came meanwhile).
            const status = err instanceof StreamsCallError ? err.status : 0;
            if (status < 400 || status >= 500) continue;
            const seq = lastSeq.get(shardId);
            const it = await streams<{ ShardIterator?: string }>('GetShardIterator', {
              StreamArn: streamArn,
              ShardId: shardId,
              ...(seq ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: seq } : { ShardIteratorType: 'TRIM_HORIZON' }),
            }).catch(() => undefined);
            if (it?.ShardIterator) iterators.set(shardId, it.ShardIterator);
          }
        }
        // No open shard yet (a table just made): look for one on every round, not every hundredth.
        if (++sinceDiscover >= 100 || iterators.size === 0) {
          sinceDiscover = 0;
          await discover(false).catch((err) => !stopped && o.log(`stream poller: ${(err as Error).message}`));
        }
      } finally {
        doneReading();
      }
      if (got === 0) await sleep(idleMs);
    }
  })();

  return {
    pause: async () => {
      if (!paused) {
        let wake!: () => void;
        paused = { resume: new Promise((r) => (wake = r)), wake };
      }
      await reading;
      await Promise.all(queues.map((q) => q.idle()));
    },
    resume: () => {
      paused?.wake();
      paused = undefined;
    },
    stop: async () => {
      stopped = true;
      paused?.wake();
      await loop;
    },
  };
}
