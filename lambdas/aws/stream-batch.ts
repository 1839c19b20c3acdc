// A stream consumer's batch, grouped by lane (a user): each lane's records run in stream order, lanes side by
// side. A record that fails is retried on its own a few times; then it and its lane's later records are set aside
// (the consumer's redo queue, flows/stream-redo.ts) and the batch reports success for the rest, so one user's
// failure neither holds the shard nor makes other users' records run twice.
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/** Where a lane's failing records go. */
export interface SetAside {
  /** Queues a lane's records, in order, to be redone after the ones already waiting. */
  put: (lane: string, records: DynamoDBRecord[]) => Promise<void>;
}

/**
 * Thrown by a step that finds its lane held (records of it wait in the redo queue, flows/stream-redo.ts): the
 * record and the lane's later ones go after them, untried. A consumer learns of a hold from a read its record
 * makes anyway, so a batch reads nothing for holds.
 */
export class LaneHeld extends Error {
  constructor(lane: string) {
    super(`lane ${lane} is held: its records go after the ones in the redo queue`);
  }
}

/** Which path a record takes: the stream's, or the redo queue's (where a hold is its own, not a reason to wait). */
export type StreamPath = 'stream' | 'redo';

export interface StreamSteps {
  /** Whose record it is: the records of one lane run in stream order. */
  lane: (record: DynamoDBRecord) => string;
  /** Everything done for one record; safe to run again (a retry, a redo). May throw LaneHeld on the stream's path. */
  step: (record: DynamoDBRecord, path: StreamPath) => Promise<void>;
  /** Logs a record's own failure after its last try (never a record only set aside behind one). */
  logFailure: (record: DynamoDBRecord, err: unknown) => void;
  /** Without it (or when it fails), a failed record and its lane's later ones are reported for Lambda's retry. */
  setAside?: SetAside;
  /** The longest one try of a record takes: a lane starts no record with less than its tries (and a margin) left. */
  recordBudgetMs?: number;
}

/** Tries of a record within the invocation, and the pause before each retry (doubled each time). */
export const RECORD_TRIES = 3;
export const RETRY_PAUSE_MS = 100;
/** Receives of a redo message before SQS moves it to the dead-letter queue (its redrive policy, lib/consumers.ts REDO_QUEUE). */
export const REDO_MAX_RECEIVES = 5;
/** Left for the set-aside calls once the records that would not fit are known. */
const SET_ASIDE_MARGIN_MS = 15_000;

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** One record's step, tried up to RECORD_TRIES times; the last error if none went through. */
export async function withRetries(run: () => Promise<void>): Promise<{ ok: true } | { ok: false; err: unknown }> {
  for (let tryNo = 1; ; tryNo++) {
    try {
      await run();
      return { ok: true };
    } catch (err) {
      if (tryNo >= RECORD_TRIES || err instanceof LaneHeld) return { ok: false, err };
      await pause(RETRY_PAUSE_MS * 2 ** (tryNo - 1));
    }
  }
}

/** The records grouped by lane, each lane's in stream order; lanes in the order of their first record. */
export function lanesOf<R>(records: R[], lane: (r: R) => string): Map<string, R[]> {
  const lanes = new Map<string, R[]>();
  for (const r of records) {
    const id = lane(r);
    const list = lanes.get(id);
    if (list) list.push(r);
    else lanes.set(id, [r]);
  }
  return lanes;
}

/** Runs a stream batch and answers with the records left for Lambda's retry (ReportBatchItemFailures). */
export async function processStreamBatch(event: DynamoDBStreamEvent, steps: StreamSteps, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<DynamoDBBatchResponse> {
  const lanes = lanesOf(event.Records, steps.lane);
  const budget = RECORD_TRIES * (steps.recordBudgetMs ?? 0) + SET_ASIDE_MARGIN_MS;
  const timeLeft = () => context?.getRemainingTimeInMillis() ?? Infinity;
  const failed: DynamoDBRecord[] = [];
  await Promise.all(
    [...lanes].map(async ([lane, records]) => {
      // Where the lane's records start going aside: from a record that kept failing or found the lane held.
      let from = records.length;
      for (let i = 0; i < from; i++) {
        // Too little time for one more record: the rest go aside (redone in order) rather than time out the batch.
        if (timeLeft() < budget) from = i;
        else {
          const outcome = await withRetries(() => steps.step(records[i], 'stream'));
          if (outcome.ok) continue;
          if (!(outcome.err instanceof LaneHeld)) steps.logFailure(records[i], outcome.err);
          from = i;
        }
      }
      const rest = records.slice(from);
      if (!rest.length) return;
      try {
        if (!steps.setAside) throw new Error('no redo queue');
        await steps.setAside.put(lane, rest);
      } catch (err) {
        if (steps.setAside) steps.logFailure(rest[0], err);
        failed.push(...rest);
      }
    }),
  );
  // Lambda retries from the earliest failed record: listed in stream order.
  const order = new Map(event.Records.map((r, i) => [r, i]));
  failed.sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
  return { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.dynamodb?.SequenceNumber ?? '' })) };
}
