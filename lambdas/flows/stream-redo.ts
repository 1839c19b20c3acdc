// A stream consumer's redo path: the records a batch set aside (one that kept failing and its user's later ones,
// aws/stream-batch.ts) go to the consumer's FIFO redo queue, one message group per user. A consumer whose records
// must keep a user's order across both paths (the publisher) holds the user first (its LaneHold), so that the
// user's next records follow them there. The same handler, fed by that queue, runs them in order with the same
// retries; the last one done releases the hold. One that keeps failing goes, after REDO_MAX_RECEIVES receives, to
// the queue's dead-letter queue, the record itself in the message.
import type { DynamoDBRecord, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { lanesOf, REDO_MAX_RECEIVES, withRetries, type SetAside, type StreamSteps } from '../aws/stream-batch';
import { sendToFifo } from '../aws/sqs';
import { currentImage } from '../aws/dynamo';

/** A consumer's hold on a lane, set before its records go aside and released by the redo of the last of them. */
export interface LaneHold {
  set: (lane: string, lastSeq: string) => Promise<void>;
  /** False when a record set aside since keeps the hold. */
  release: (lane: string, seq: string) => Promise<boolean>;
}

/** SQS takes 256 KB per message; a record larger than this goes without its images and is read again. */
const MAX_BODY_BYTES = 250_000;

/** A redo message: whose record it is, and the record (without its images when they were too large). */
interface RedoBody {
  lane: string;
  record: DynamoDBRecord;
  /** Sent without its new image: the redo reads the item as it is then. */
  reread?: true;
}

const seqOf = (r: DynamoDBRecord) => r.dynamodb?.SequenceNumber ?? '';

/**
 * The message for a record: whole when it fits; else without its old image (what changed is then unknown, and a
 * MODIFY publishes as if new); else keys only, read again when redone.
 */
export function redoBody(lane: string, record: DynamoDBRecord): string {
  const whole = JSON.stringify({ lane, record } satisfies RedoBody);
  if (Buffer.byteLength(whole) <= MAX_BODY_BYTES) return whole;
  const { OldImage: _old, ...withNew } = record.dynamodb ?? {};
  const lighter = JSON.stringify({ lane, record: { ...record, dynamodb: withNew } } satisfies RedoBody);
  if (Buffer.byteLength(lighter) <= MAX_BODY_BYTES) return lighter;
  const { NewImage: _new, ...keysOnly } = withNew;
  return JSON.stringify({ lane, record: { ...record, dynamodb: keysOnly }, reread: true } satisfies RedoBody);
}

/** Where a consumer's batches set records aside: its hold on the user first (if it keeps one), then the messages (deduplicated by record). */
export function streamRedo(queueUrl: string, hold?: LaneHold): SetAside {
  return {
    put: async (lane, records) => {
      // The hold before the messages: a send that fails is retried by the stream, and finds the lane held.
      await hold?.set(lane, seqOf(records[records.length - 1]));
      await sendToFifo(
        queueUrl,
        records.map((r) => ({ body: redoBody(lane, r), groupId: lane, deduplicationId: r.eventID ?? seqOf(r) })),
      );
    },
  };
}

/** A batch from the redo queue is told apart from a stream batch by its source. */
export const isRedoBatch = (event: { Records: { eventSource?: string }[] }): event is SQSEvent => event.Records[0]?.eventSource === 'aws:sqs';

/** The record a redo message carries, its image read again if it came without one (undefined: the item is gone). */
async function recordOf(body: RedoBody): Promise<DynamoDBRecord | undefined> {
  if (!body.reread) return body.record;
  const image = await currentImage(body.record.dynamodb?.Keys);
  return image && { ...body.record, dynamodb: { ...body.record.dynamodb, NewImage: image } };
}

/**
 * Runs a batch of a consumer's redo queue: each user's messages in order (FIFO, one group per user), users side by
 * side, each record with the stream's retries. A failure is reported with the user's later messages in the batch
 * (FIFO: they must not overtake it). Done with the user's last record set aside (or giving it up to the
 * dead-letter queue), the consumer's hold, if it keeps one, is released: the user's records go by the stream again.
 */
export async function redoBatch(event: SQSEvent, steps: Pick<StreamSteps, 'step' | 'logFailure'>, hold?: LaneHold): Promise<SQSBatchResponse> {
  const groups = lanesOf(event.Records, (m) => m.attributes.MessageGroupId ?? m.messageId);
  const failed: string[] = [];
  await Promise.all(
    [...groups.values()].map(async (messages) => {
      for (const [i, m] of messages.entries()) {
        let body: RedoBody | undefined;
        const outcome = await withRetries(async () => {
          body ??= JSON.parse(m.body) as RedoBody;
          const record = await recordOf(body);
          if (record) await steps.step(record, 'redo');
        });
        const finalReceive = Number(m.attributes.ApproximateReceiveCount) >= REDO_MAX_RECEIVES;
        if (hold && body && (outcome.ok || finalReceive)) {
          // A hold left behind (this write failed) is released by the user's next record redone, or expires.
          await hold.release(body.lane, seqOf(body.record)).catch(() => false);
        }
        if (!outcome.ok) {
          steps.logFailure(body?.record ?? { eventID: m.messageId }, outcome.err);
          failed.push(...messages.slice(i).map((x) => x.messageId));
          return;
        }
      }
    }),
  );
  return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
}
