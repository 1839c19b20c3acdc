// The local stack's one event-source runner: how a function is invoked on events as Lambda does it for each
// source, and what happens when it fails. A DynamoDB stream's batch (retry from the first failed record, bisect on
// a function error, bounded retries and record age, then the batch's range to the on-failure destination), a
// queue's batch (partial batch response; redelivery and maxReceiveCount are the queue's, local-queue.ts) and an
// S3 event (asynchronous invocation: two retries, then the on-failure destination). Dead letters: dead-letters.ts.
import { randomUUID } from 'node:crypto';
import type { Context, DynamoDBRecord, S3Event } from 'aws-lambda';
import type { FunctionDef } from '../routes';
import { handlerLoader } from './handlers';
import type { DeadLetterCondition, DeadLetters } from './dead-letters';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Handler = (event: unknown, context: Context) => Promise<{ batchItemFailures?: { itemIdentifier?: string }[] } | void>;

/** What one invocation did to its batch. */
export interface Outcome {
  /** The ids of the records to retry, in the batch's order: none when the whole batch succeeded. */
  failed: string[];
  /** Set when the function failed as a whole (it threw): every record failed. */
  functionError?: string;
}

/** A stream event source mapping's settings (STREAM_DELIVERY and the consumer's declaration). */
export interface StreamPolicy {
  retryAttempts: number;
  /** -1: no limit. */
  maxRecordAgeSeconds: number;
  bisectBatchOnFunctionError: boolean;
  /** The wait before retry n (from 0); Lambda retries a stream batch at once, with backoff on repeated errors. */
  retryDelayMs?: (retry: number) => number;
}

/** Lambda's asynchronous invocation settings (ASYNC_DELIVERY). */
export interface AsyncPolicy {
  retryAttempts: number;
  maxEventAgeSeconds: number;
  /** The wait before retry n (from 0). On AWS about a minute, then two. */
  retryDelayMs: (retry: number) => number;
}

const seqOf = (r: DynamoDBRecord) => r.dynamodb?.SequenceNumber ?? '';
const streamBackoff = (retry: number) => Math.min(100 * 2 ** retry, 2000);

export class EventSource {
  private readonly load: () => Promise<Handler>;

  constructor(
    readonly def: FunctionDef,
    root: string,
    private readonly deadLetters: DeadLetters,
    private readonly log: (line: string) => void,
  ) {
    const loader = handlerLoader<Handler>(root);
    this.load = () => loader(def.entry);
  }

  /**
   * One invocation with Lambda's context (the time left before the function's timeout). `ids` are the batch's
   * item identifiers: a reported failure naming none of them (or an empty one) fails the whole batch, as on AWS.
   */
  async invoke(event: unknown, ids: string[]): Promise<Outcome> {
    const deadline = Date.now() + (this.def.timeoutSeconds ?? 10) * 1000;
    const context = { awsRequestId: randomUUID(), functionName: this.def.id, getRemainingTimeInMillis: () => deadline - Date.now() } as Context;
    try {
      const res = await (await this.load())(event, context);
      const reported = (res && res.batchItemFailures) || [];
      if (reported.length === 0) return { failed: [] };
      const named = new Set(reported.map((f) => f.itemIdentifier ?? ''));
      if ([...named].some((id) => !ids.includes(id))) return { failed: ids };
      return { failed: ids.filter((id) => named.has(id)) };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log(`${this.def.id}: handler threw (${message})`);
      return { failed: ids, functionError: message };
    }
  }

  /**
   * A stream batch of one shard, as a DynamoDB event source mapping with ReportBatchItemFailures runs it: after
   * reported failures the batch is retried from the first failed record (those before it are done); after a
   * function error it is split in two and each half is run in turn (splitting counts no retry). A (part of a)
   * batch past its retries, or records older than the maximum age, go to the on-failure destination, named
   * `destination`, and the records after them run on. Resolves once every record is handled or dead-lettered.
   */
  async runStreamBatch(records: DynamoDBRecord[], shard: string, destination: string, p: StreamPolicy): Promise<void> {
    const work = [{ records, retries: 0 }];
    while (work.length) {
      const part = work[0];
      // Records are in order, so the old ones come first: they are discarded before the function sees them.
      const now = Date.now() / 1000;
      const old = part.records.findIndex((r) => p.maxRecordAgeSeconds < 0 || now - (r.dynamodb?.ApproximateCreationDateTime ?? now) <= p.maxRecordAgeSeconds);
      const expired = old < 0 ? part.records.length : old;
      if (expired > 0) {
        this.streamDeadLetter(destination, shard, part.records.slice(0, expired), 'RecordAgeExceeded', part.retries, 'the records are older than the maximum record age');
        part.records = part.records.slice(expired);
        if (!part.records.length) work.shift();
        continue;
      }
      const outcome = await this.invoke({ Records: part.records }, part.records.map(seqOf));
      if (!outcome.failed.length) {
        work.shift();
        continue;
      }
      const rest = part.records.slice(part.records.findIndex((r) => seqOf(r) === outcome.failed[0]));
      if (outcome.functionError !== undefined && p.bisectBatchOnFunctionError && rest.length > 1) {
        const half = Math.ceil(rest.length / 2);
        work.splice(0, 1, { records: rest.slice(0, half), retries: part.retries }, { records: rest.slice(half), retries: part.retries });
        continue;
      }
      if (part.retries >= p.retryAttempts) {
        const why = outcome.functionError ?? `reported failures from record ${seqOf(rest[0])}`;
        this.streamDeadLetter(destination, shard, rest, 'RetryAttemptsExhausted', part.retries + 1, why);
        work.shift();
        continue;
      }
      work[0] = { records: rest, retries: part.retries + 1 };
      await sleep((p.retryDelayMs ?? streamBackoff)(part.retries));
    }
  }

  /**
   * An event S3 hands to Lambda asynchronously: on a function error, retried `retryAttempts` times; then, or once
   * older than the maximum event age, Lambda's invocation record goes to the on-failure destination `destination`.
   */
  async runAsync(event: S3Event, destination: string, p: AsyncPolicy): Promise<void> {
    const sentAt = Date.parse(event.Records[0]?.eventTime ?? '') || Date.now();
    for (let attempt = 0; ; attempt++) {
      const aged = (Date.now() - sentAt) / 1000 > p.maxEventAgeSeconds;
      const outcome = aged ? undefined : await this.invoke(event, []);
      if (outcome && outcome.functionError === undefined) return;
      if (!aged && attempt < p.retryAttempts) {
        await sleep(p.retryDelayMs(attempt));
        continue;
      }
      const condition: DeadLetterCondition = aged ? 'EventAgeExceeded' : 'RetriesExhausted';
      this.deadLetters.write(destination, {
        source: 'aws:s3',
        consumer: this.def.id,
        condition,
        body: {
          version: '1.0',
          timestamp: new Date().toISOString(),
          requestContext: { requestId: randomUUID(), functionArn: this.functionArn(), condition, approximateInvokeCount: aged ? attempt : attempt + 1 },
          requestPayload: event,
          responseContext: { statusCode: 200, executedVersion: '$LATEST', ...(outcome && { functionError: 'Unhandled' }) },
          ...(outcome && { responsePayload: { errorType: 'Error', errorMessage: outcome.functionError } }),
        },
      });
      return;
    }
  }

  private functionArn(): string {
    return `arn:aws:lambda:local:000000000000:function:${this.def.id}`;
  }

  /** What Lambda sends a stream mapping's on-failure destination: the batch's shard and range; locally, its records too. */
  private streamDeadLetter(destination: string, shard: string, records: DynamoDBRecord[], condition: DeadLetterCondition, invokes: number, why: string): void {
    const first = records[0];
    const last = records[records.length - 1];
    const arrival = (r: DynamoDBRecord) => new Date((r.dynamodb?.ApproximateCreationDateTime ?? 0) * 1000).toISOString();
    this.log(`${this.def.id}: gave up on ${records.length} record(s) of shard ${shard} (${why})`);
    this.deadLetters.write(destination, {
      source: 'aws:dynamodb',
      consumer: this.def.id,
      condition,
      body: {
        version: '1.0',
        timestamp: new Date().toISOString(),
        requestContext: { requestId: randomUUID(), functionArn: this.functionArn(), condition, approximateInvokeCount: invokes },
        responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: condition === 'RecordAgeExceeded' ? undefined : 'Unhandled' },
        DDBStreamBatchInfo: {
          shardId: shard,
          startSequenceNumber: seqOf(first),
          endSequenceNumber: seqOf(last),
          approximateArrivalOfFirstRecord: arrival(first),
          approximateArrivalOfLastRecord: arrival(last),
          batchSize: records.length,
          streamArn: first.eventSourceARN,
        },
      },
      records,
    });
  }
}
