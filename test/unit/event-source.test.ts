// The local event-source runner (lib/local/event-source.ts) with a real handler (fixtures/batch-handler.ts) and
// real dead-letter files: each source behaves as Lambda documents it. A DynamoDB stream batch is retried from its
// first failed record, bisected on a function error, dead-lettered as its shard and sequence range after its
// retries or past its age; a queue's failed messages come back after the visibility timeout and go to the
// dead-letter queue after maxReceiveCount; an S3 event is retried twice, then dead-lettered with the event.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DynamoDBRecord, S3Event } from 'aws-lambda';
import { EventSource, type StreamPolicy } from '../../lib/local/event-source';
import { DeadLetters, type DeadLetter } from '../../lib/local/dead-letters';
import { LocalQueue } from '../../lib/local/local-queue';
import { ConsumerQueue } from '../../lib/local/stream-consumer';
import { StreamCheckpoints } from '../../lib/local/stream-checkpoints';
import { Journal } from '../../lib/local/journal';
import type { StreamConsumerDef } from '../../lib/consumers';
import { ASYNC_DELIVERY } from '../../lib/consumers';
import { calls } from './fixtures/batch-handler';
import { jsonLines } from '../support/jsonl';
import { until } from '../support/realtime';

const ROOT = resolve(__dirname, '../..');
const def = { id: 'batch_fn', entry: 'test/unit/fixtures/batch-handler.ts', dynamodb: [], timeoutSeconds: 5 };
const quiet = () => undefined;
let dir: string;
let deadLetters: DeadLetters;
let source: EventSource;
const dead = (name: string) => jsonLines<DeadLetter>(join(dir, 'dead-letter', `${name}.jsonl`));
/** A stream batch's dead-letter body, as far as the tests read it: the batch's range. */
type StreamBatchBody = { DDBStreamBatchInfo: { batchSize: number } };
const words = () => calls.map((c) => c.words);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'event-source-'));
  deadLetters = new DeadLetters(join(dir, 'dead-letter'), quiet);
  source = new EventSource(def, ROOT, deadLetters, quiet);
  calls.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('DynamoDB stream batches', () => {
  let seq = 1000;
  /** Records as the poller hands them on; each word unique to its test (the handler counts attempts per record). */
  const records = (...ws: string[]): DynamoDBRecord[] =>
    ws.map((word) => ({
      eventName: 'INSERT',
      eventSourceARN: 'arn:aws:dynamodb:local:000000000000:table/t/stream/s',
      dynamodb: { SequenceNumber: String(++seq), ApproximateCreationDateTime: Math.floor(Date.now() / 1000), NewImage: { word: { S: word } } },
    }));
  const policy: StreamPolicy = { retryAttempts: 2, maxRecordAgeSeconds: 3600, bisectBatchOnFunctionError: true, retryDelayMs: () => 0 };

  test('reported failures: the batch is retried from the first failed record, the records before it are not', async () => {
    await source.runStreamBatch(records('ok', 'fail-once', 'ok'), 'shard-1', 'batch_fn', policy);
    expect(words()).toEqual([['ok', 'fail-once', 'ok'], ['fail-once', 'ok']]);
    expect(dead('batch_fn')).toEqual([]);
  });

  test('past its retries, the failing rest goes to the on-failure destination as its shard and sequence range (and, locally, its records)', async () => {
    const batch = records('ok', 'fail', 'ok');
    await source.runStreamBatch(batch, 'shard-1', 'batch_fn', policy);
    // The first invocation and two retries of the rest; then the batch after it would run.
    expect(words()).toEqual([['ok', 'fail', 'ok'], ['fail', 'ok'], ['fail', 'ok']]);
    const [letter] = dead('batch_fn');
    expect(letter).toMatchObject({
      source: 'aws:dynamodb',
      consumer: 'batch_fn',
      condition: 'RetryAttemptsExhausted',
      body: {
        requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 },
        DDBStreamBatchInfo: {
          shardId: 'shard-1',
          startSequenceNumber: batch[1].dynamodb?.SequenceNumber,
          endSequenceNumber: batch[2].dynamodb?.SequenceNumber,
          batchSize: 2,
          streamArn: batch[0].eventSourceARN,
        },
      },
    });
    expect(letter.records?.map((r) => r.dynamodb?.SequenceNumber)).toEqual([batch[1], batch[2]].map((r) => r.dynamodb?.SequenceNumber));
    expect(dead('batch_fn')).toHaveLength(1);
  });

  test('a function error bisects the batch until the poison record is alone; only it is dead-lettered, in order with the rest', async () => {
    await source.runStreamBatch(records('a', 'b', 'throw', 'd'), 'shard-1', 'batch_fn', policy);
    expect(words()).toEqual([
      ['a', 'b', 'throw', 'd'],
      ['a', 'b'],
      ['throw', 'd'],
      ['throw'], // alone: splitting counted no retry; now its two retries
      ['throw'],
      ['throw'],
      ['d'],
    ]);
    expect(dead('batch_fn').map((l) => l.records?.map((r) => r.dynamodb?.NewImage?.word.S))).toEqual([['throw']]);
  });

  test('without bisect, a function error retries the whole batch and dead-letters all of it', async () => {
    await source.runStreamBatch(records('a', 'throw'), 'shard-1', 'batch_fn', { ...policy, bisectBatchOnFunctionError: false });
    expect(words()).toEqual([['a', 'throw'], ['a', 'throw'], ['a', 'throw']]);
    expect((dead('batch_fn')[0].body as StreamBatchBody).DDBStreamBatchInfo.batchSize).toBe(2);
  });

  test('records older than the maximum record age are dead-lettered without an invocation; the fresh ones run', async () => {
    const batch = records('stale', 'fresh');
    (batch[0].dynamodb as { ApproximateCreationDateTime: number }).ApproximateCreationDateTime -= 7200;
    await source.runStreamBatch(batch, 'shard-1', 'batch_fn', policy);
    expect(words()).toEqual([['fresh']]);
    expect(dead('batch_fn')).toMatchObject([{ condition: 'RecordAgeExceeded', body: { DDBStreamBatchInfo: { batchSize: 1 } } }]);
  });

  test("a consumer's batches: at most batchSize of its records, one shard at a time, the checkpoint after each", async () => {
    const consumer: StreamConsumerDef = { ...def, filters: [{ eventName: ['INSERT'] }], batchSize: 2, timeoutSeconds: 5, startingPosition: 'TRIM_HORIZON', failureLog: '', redoQueueEnv: 'PUBLISHER_REDO_QUEUE_URL' };
    const checkpoints = new StreamCheckpoints(join(dir, 'checkpoints.json'), 'arn', [consumer.id]);
    const queue = new ConsumerQueue(consumer, ROOT, deadLetters, checkpoints, quiet, policy);
    const removed = { ...records('skipped')[0], eventName: 'REMOVE' as const }; // not the consumer's: its filter
    const first = [...records('a', 'b'), removed, ...records('c')];
    const second = records('d');
    queue.offer(first, 'shard-1');
    queue.offer(second, 'shard-2');
    await until(() => checkpoints.of(consumer.id, 'shard-2') !== undefined, 5000, 'the last batch');
    expect(words()).toEqual([['a', 'b'], ['c'], ['d']]);
    expect(checkpoints.of(consumer.id, 'shard-1')).toBe(first[3].dynamodb?.SequenceNumber);
  });

  test('a batching window gathers records until the batch is full', async () => {
    const consumer: StreamConsumerDef = {
      ...def,
      filters: [{ eventName: ['INSERT'] }],
      batchSize: 3,
      batchingWindowSeconds: 60, // only a full batch ends it early here
      timeoutSeconds: 5,
      startingPosition: 'TRIM_HORIZON',
      failureLog: '',
      redoQueueEnv: 'PUBLISHER_REDO_QUEUE_URL',
    };
    const checkpoints = new StreamCheckpoints(join(dir, 'checkpoints.json'), 'arn', [consumer.id]);
    const queue = new ConsumerQueue(consumer, ROOT, deadLetters, checkpoints, quiet, policy);
    queue.offer(records('a'), 'shard-1');
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([]);
    queue.offer(records('b', 'c'), 'shard-1');
    await until(() => calls.length > 0, 5000, 'the batch');
    expect(words()).toEqual([['a', 'b', 'c']]);
  });
});

describe('SQS queues', () => {
  const queue = (settings: { batchSize?: number; maxReceiveCount?: number } = {}) =>
    new LocalQueue('jobs', { def, queue: { batchSize: 10, visibilityTimeoutSeconds: 300, maxReceiveCount: 3, ...settings } }, {
      root: ROOT,
      journalDir: join(dir, 'queues'),
      deadLetters,
      log: quiet,
      visibilityTimeoutMs: 1, // failed messages come back at once
    });
  const pending = () => new Journal(join(dir, 'queues', 'jobs.jsonl')).pending().length;
  let q: LocalQueue;
  afterEach(() => q.stop());

  test('partial batch response: only the reported messages are received again, with their receive count', async () => {
    q = queue();
    q.start();
    q.send(['ok', 'fail-once', 'ok'].map((body) => ({ body, delaySeconds: 0 })));
    await until(() => calls.length === 2 && pending() === 0, 5000, 'the redelivery');
    expect(calls).toEqual([
      { words: ['ok', 'fail-once', 'ok'], receives: ['1', '1', '1'] },
      { words: ['fail-once'], receives: ['2'] },
    ]);
    expect(dead('jobs_dlq')).toEqual([]);
  });

  test('a function error receives the whole batch again; batches hold at most batchSize messages', async () => {
    q = queue({ batchSize: 2 });
    q.send(['a', 'throw-once', 'c'].map((body) => ({ body, delaySeconds: 0 })));
    q.start();
    await until(() => pending() === 0, 5000, 'every message handled');
    expect(calls.every((c) => c.words.length <= 2)).toBe(true);
    // The batch that threw came back whole: its other message was received twice.
    expect(calls.flatMap((c) => c.words).sort()).toEqual(['a', 'a', 'c', 'throw-once', 'throw-once']);
  });

  test('after maxReceiveCount receives, the message moves to the dead-letter queue with its body and receive count', async () => {
    q = queue();
    q.start();
    q.send([{ body: JSON.stringify({ job: 1 }), delaySeconds: 0 }, { body: 'fail', delaySeconds: 0 }]);
    await until(() => dead('jobs_dlq').length > 0, 5000, 'the dead letter');
    expect(calls.map((c) => c.receives)).toEqual([['1', '1'], ['2'], ['3']]);
    expect(dead('jobs_dlq')).toMatchObject([{ source: 'aws:sqs', consumer: 'batch_fn', condition: 'MaxReceiveCountExceeded', body: 'fail', attributes: { ApproximateReceiveCount: '3' } }]);
    expect(pending()).toBe(0);
  });
});

describe('S3 events (asynchronous invocation)', () => {
  const event = (key: string, eventTime = new Date().toISOString()): S3Event =>
    ({ Records: [{ eventName: 'ObjectCreated:Post', eventTime, s3: { object: { key } } }] }) as unknown as S3Event;
  const policy = { ...ASYNC_DELIVERY, retryDelayMs: () => 0 };

  test('a function error is retried twice, then the invocation record goes to the destination with the event', async () => {
    const e = event('bots/throw');
    await source.runAsync(e, 'batch_fn', policy);
    expect(calls).toHaveLength(ASYNC_DELIVERY.retryAttempts + 1);
    expect(dead('batch_fn')).toMatchObject([
      {
        source: 'aws:s3',
        condition: 'RetriesExhausted',
        body: {
          requestContext: { condition: 'RetriesExhausted', approximateInvokeCount: 3 },
          requestPayload: e,
          responseContext: { functionError: 'Unhandled' },
          responsePayload: { errorMessage: 'the batch holds a poison record' },
        },
      },
    ]);
  });

  test('an event handled on a retry is not dead-lettered; one past the maximum event age is, without an invocation', async () => {
    await source.runAsync(event('bots/throw-once'), 'batch_fn', policy);
    expect(calls).toHaveLength(2);
    const old = event('bots/ok', new Date(Date.now() - (ASYNC_DELIVERY.maxEventAgeSeconds + 60) * 1000).toISOString());
    await source.runAsync(old, 'batch_fn', policy);
    expect(calls).toHaveLength(2);
    expect(dead('batch_fn')).toMatchObject([{ condition: 'EventAgeExceeded', body: { requestPayload: old } }]);
  });
});
