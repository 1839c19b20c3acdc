// SQS: the webhook and task queues, the stream consumers' redo queues (FIFO), and the dead-letter queues (the
// local stack serves the same API, lib/local/sqs.ts).
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../shared/config';
import { clientOptions } from './options';

const sqs = new SQSClient({ ...clientOptions(), endpoint: config().sqsEndpoint });

export async function sendToQueue(queueUrl: string, body: unknown, delaySeconds = 0): Promise<void> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body), DelaySeconds: delaySeconds }));
}

/** Sends any number of bodies, 10 per call; throws if any entry failed (the caller retries them all). */
export async function sendBatchToQueue(queueUrl: string, bodies: unknown[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const chunk = bodies.slice(i, i + 10);
    const out = await sqs.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: chunk.map((body, j) => ({ Id: String(j), MessageBody: JSON.stringify(body) })) }),
    );
    if (out.Failed?.length) throw new Error(`SQS refused ${out.Failed.length} of ${chunk.length} messages: ${out.Failed[0].Message}`);
  }
}

/** One message of a FIFO queue: in order within its group, sent once per deduplication id (5 minutes). */
export interface FifoMessage {
  body: string;
  groupId: string;
  deduplicationId: string;
}

/** Sends FIFO messages in order, 10 per call; throws if any entry failed (the caller retries them all: deduplicated). */
export async function sendToFifo(queueUrl: string, messages: FifoMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const chunk = messages.slice(i, i + 10);
    const out = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: chunk.map((m, j) => ({ Id: String(j), MessageBody: m.body, MessageGroupId: m.groupId, MessageDeduplicationId: m.deduplicationId })),
      }),
    );
    if (out.Failed?.length) throw new Error(`SQS refused ${out.Failed.length} of ${chunk.length} messages: ${out.Failed[0].Message}`);
  }
}
