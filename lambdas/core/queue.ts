// SQS: the webhook queue and its dead-letter queue (the local stack serves the same API, see lib/local/sqs.ts).
// SQS's JSON API signed and sent by aws-http.ts, as DynamoDB's: the SDK's SQS client added ~150 KB and
// ~35 ms of cold start to the webhook functions for two calls.
import { awsJsonCall } from './aws-http';
import { config } from './config';

async function sqs<T>(action: 'SendMessage' | 'SendMessageBatch', input: object): Promise<T> {
  const { status, doc, error } = await awsJsonCall('sqs', config().sqsEndpoint, '1.0', `AmazonSQS.${action}`, input);
  if (error) throw new Error(`SQS ${action} answered ${status} ${error.type}: ${error.message}`);
  return doc as T;
}

export async function sendToQueue(queueUrl: string, body: unknown, delaySeconds = 0): Promise<void> {
  await sqs('SendMessage', { QueueUrl: queueUrl, MessageBody: JSON.stringify(body), DelaySeconds: delaySeconds });
}

/** Sends up to any number of bodies, 10 per call; throws if any entry failed (the caller retries them all). */
export async function sendBatchToQueue(queueUrl: string, bodies: unknown[]): Promise<void> {
  for (let i = 0; i < bodies.length; i += 10) {
    const chunk = bodies.slice(i, i + 10);
    const out = await sqs<{ Failed?: { Message?: string }[] }>('SendMessageBatch', {
      QueueUrl: queueUrl,
      Entries: chunk.map((body, j) => ({ Id: String(j), MessageBody: JSON.stringify(body) })),
    });
    if (out.Failed?.length) throw new Error(`SQS refused ${out.Failed.length} of ${chunk.length} messages: ${out.Failed[0].Message}`);
  }
}
