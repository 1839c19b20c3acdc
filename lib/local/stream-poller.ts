// Reads DynamoDB Local's stream (DescribeStream / GetShardIterator / GetRecords, following new shards) and
// hands every record to each consumer's queue (stream-consumer.ts: its filters and batches, run by the
// event-source runner as Lambda's mapping would, with its retries and dead letters). Each consumer's position is
// kept in the data folder (stream-checkpoints.ts): a restart resumes where it stopped.
import { invocationEndListeners } from './handlers';
import { ConsumerQueue } from './stream-consumer';
import { sleep } from './event-source';
import { DeadLetters } from './dead-letters';
import { PollPacer } from './poll-pacer';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { StreamConsumerDef } from '../consumers';
import { toLambdaRecord } from './stream-records';
import { seqAfter, StreamCheckpoints, type ShardStart } from './stream-checkpoints';

/** The HTTP status of a refused stream call; 0 when no reply came (connection refused, timeout). */
export const refusalStatus = (err: unknown): number => (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;

export interface StreamPollerOptions {
  endpoint: string;
  region: string;
  tableName: string;
  root: string;
  consumers: StreamConsumerDef[];
  deadLetterDir: string;
  /** The consumers' positions (DATA_DIR/stream-checkpoints.json). */
  checkpointFile: string;
  log: (line: string) => void;
  /** Pause between polls while records may be coming (after a handler ran, after records). */
  idleMs?: number;
  /** The longest pause once nothing has happened for a while: an idle stack polls this rarely. */
  maxIdleMs?: number;
  /** On a restart, resolves when the poller may read on (sockets-back.ts); `stopped` ends the wait early. */
  holdBacklog?: (stopped: () => boolean) => Promise<void>;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

const iteratorOf = (start: ShardStart) =>
  start.type === 'AFTER_SEQUENCE_NUMBER' ? { ShardIteratorType: start.type, SequenceNumber: start.seq } : { ShardIteratorType: start.type };

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
  const checkpoints = new StreamCheckpoints(o.checkpointFile, streamArn, o.consumers.map((c) => c.id));
  const deadLetters = new DeadLetters(o.deadLetterDir, o.log);
  const queues = o.consumers.map((c) => new ConsumerQueue(c, o.root, deadLetters, checkpoints, o.log));
  const pacer = new PollPacer(o.idleMs ?? 10, o.maxIdleMs ?? 1000);
  const wake = () => pacer.wake();
  invocationEndListeners.add(wake);

  let stopped = false;
  const known = new Set<string>();
  const iterators = new Map<string, string>();
  /** Last sequence number handed to the consumers, per shard: a lost iterator resumes right after it. */
  const lastSeq = new Map<string, string>();

  /** Starts reading a shard at `start` (a checkpoint the stream has trimmed meanwhile: its oldest record). */
  const open = async (id: string, start: ShardStart) => {
    if (start.type === 'AFTER_SEQUENCE_NUMBER') lastSeq.set(id, start.seq);
    const it = await streams
      .send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ...iteratorOf(start) }))
      .catch((err) => (start.type === 'AFTER_SEQUENCE_NUMBER' && refusalStatus(err) === 400 ? undefined : Promise.reject(err)));
    const fallback = it ?? (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ShardIteratorType: 'TRIM_HORIZON' })));
    if (fallback.ShardIterator) iterators.set(id, fallback.ShardIterator);
  };

  /**
   * A very first start on a data folder (which may hold a table from before checkpoints were kept): what is in
   * the stream already is no one's to handle. Each consumer's checkpoint is set at the shard's last record, read
   * through once, and reading goes on from there: a restart before any new record is handled resumes there too.
   */
  const skipToEnd = async (id: string, end: string | undefined) => {
    if (end) return checkpoints.seed(id, end);
    let it = (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ShardIteratorType: 'TRIM_HORIZON' }))).ShardIterator;
    let last: string | undefined;
    while (it) {
      const out = await streams.send(new GetRecordsCommand({ ShardIterator: it, Limit: 1000 }));
      const records = out.Records ?? [];
      if (records.length) last = records[records.length - 1].dynamodb?.SequenceNumber;
      if (records.length === 0 || !out.NextShardIterator) break;
      it = out.NextShardIterator;
    }
    if (last) {
      checkpoints.seed(id, last);
      lastSeq.set(id, last);
    }
    if (it) iterators.set(id, it);
  };

  /**
   * Finds shards not read yet. A child shard waits until its parent is read to its end, so that records of one
   * item keep their order. At start-up a shard is read from where the consumers stopped (startOf).
   */
  const discover = async (initial: boolean) => {
    const shards: Shard[] = [];
    let from: string | undefined;
    do {
      const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: from }));
      shards.push(...(out.StreamDescription?.Shards ?? []));
      from = out.StreamDescription?.LastEvaluatedShardId;
    } while (from);
    if (initial) checkpoints.prune(new Set(shards.map((s) => s.ShardId as string)));
    for (const shard of shards) {
      const id = shard.ShardId as string;
      if (known.has(id) || (shard.ParentShardId && iterators.has(shard.ParentShardId))) continue;
      known.add(id);
      const end = shard.SequenceNumberRange?.EndingSequenceNumber;
      if (initial && !checkpoints.resumed) {
        await skipToEnd(id, end);
        continue;
      }
      const start = initial ? checkpoints.startOf(id) : { type: 'TRIM_HORIZON' as const };
      // A closed shard matters at start-up only if records after the consumers' positions are left in it.
      if (end && start.type === 'AFTER_SEQUENCE_NUMBER' && !seqAfter(end, start.seq)) continue;
      await open(id, start);
    }
  };

  const begin = async () => {
    await discover(true);
    checkpoints.saveStart();
    o.log(`stream poller: ${checkpoints.resumed ? 'resumed where the consumers stopped' : 'reading new records'} (${iterators.size} shard${iterators.size === 1 ? '' : 's'})`);
    pacer.wake(); // start-up: whatever the stack does first is read at once
  };
  // A very first start's positions are taken before this returns: what the caller writes next is read.
  const hold = checkpoints.resumed ? o.holdBacklog : undefined;
  if (!hold) await begin();
  const loop = (async () => {
    if (hold) {
      await hold(() => stopped).catch((err) => o.log(`stream poller: ${(err as Error).message}; reading on`));
      if (stopped) return;
      // Nothing awaits this loop until the stop: a failed start-up read is retried here, never left unhandled.
      for (;;) {
        try {
          await begin();
          break;
        } catch (err) {
          if (stopped) return;
          o.log(`stream poller: ${(err as Error).message}; starting again`);
          known.clear();
          iterators.clear();
          await sleep(500);
        }
      }
    }
    let sinceDiscover = 0;
    while (!stopped) {
      let got = 0;
      for (const [shardId, iterator] of [...iterators]) {
        try {
          const out = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
          const records = (out.Records ?? []).map((r) => toLambdaRecord(r, streamArn, o.region));
          got += records.length;
          if (records.length) lastSeq.set(shardId, records[records.length - 1].dynamodb?.SequenceNumber as string);
          for (const q of queues) q.offer(records, shardId);
          if (out.NextShardIterator) iterators.set(shardId, out.NextShardIterator);
          else {
            iterators.delete(shardId); // the shard closed: its children are found by discover(), now
            sinceDiscover = 100;
          }
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
      for (const q of queues) q.stop();
      invocationEndListeners.delete(wake);
      pacer.wake();
      await loop;
      streams.destroy();
    },
  };
}
