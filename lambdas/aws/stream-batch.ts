// A DynamoDB stream batch run through Powertools' BatchProcessor, with the stream's own rule on top: Lambda
// retries a batch from its first failed record, so nothing after a failure may run ahead of it where order counts.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/**
 * A record not run because an earlier one it must follow failed. Reported failed (the retry runs it after that
 * one), but no failure of its own: the consumer's failure log, which an alarm counts, does not name it.
 */
class Behind extends Error {
  constructor() {
    super('an earlier record it follows failed; retried after it');
  }
}

export interface StreamSteps<P> {
  /**
   * A record's first step, run in stream order across the whole batch: once one fails, no later record runs.
   * Returns what `run` needs, or undefined when there is nothing more to do for the record.
   */
  prepare: (record: DynamoDBRecord) => Promise<P | undefined>;
  /**
   * Its second step, if any: in stream order within the record's lane (the records of one lane wait for each
   * other and stop at a failure, as `prepare` does), lanes in parallel.
   */
  run?: { lane: (prepared: P) => string; step: (prepared: P, record: DynamoDBRecord) => Promise<void> };
  /** Logs a record's own failure (never a record only held back behind one). */
  logFailure: (record: DynamoDBRecord, err: unknown) => void;
}

/** Runs a stream batch and answers with the failed records (ReportBatchItemFailures). */
export async function processStreamBatch<P>(event: DynamoDBStreamEvent, steps: StreamSteps<P>): Promise<DynamoDBBatchResponse> {
  // Each invocation its own processor: the local stack may run one module's batches side by side.
  const processor = new BatchProcessor(EventType.DynamoDBStreams);
  // Powertools starts every record's handler at once, in stream order; these chains make them wait their turn.
  let previous: Promise<unknown> = Promise.resolve();
  const lanes = new Map<string, Promise<void>>();
  const after = (earlier: Promise<unknown>) =>
    earlier.then(
      () => undefined,
      () => {
        throw new Behind();
      },
    );
  const handle = async (record: DynamoDBRecord): Promise<void> => {
    // The lane's turn is taken inside the ordered first step, so lanes are joined in stream order too.
    const prepared = after(previous).then(async () => {
      const p = await steps.prepare(record);
      if (p === undefined || !steps.run) return undefined;
      const lane = steps.run.lane(p);
      const { step } = steps.run;
      const ran = after(lanes.get(lane) ?? Promise.resolve()).then(() => step(p, record));
      lanes.set(lane, ran);
      return { ran };
    });
    previous = prepared;
    try {
      await (await prepared)?.ran;
    } catch (err) {
      if (!(err instanceof Behind)) steps.logFailure(record, err);
      throw err;
    }
  };
  return processPartialResponse(event, handle, processor, { throwOnFullBatchFailure: false });
}
