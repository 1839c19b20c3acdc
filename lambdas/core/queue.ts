// SQS: the webhook queue and its dead-letter queue (the local stack serves the same API, see lib/local/sqs.ts).
// SQS's JSON API signed and sent by aws-http.ts, as DynamoDB's: the SDK's SQS client added ~150 KB and
// ~35 ms of cold start to the webhook functions for two calls.
import { signedFetch } from './aws-http';
import { config } from './config';

let endpoint: URL | undefined;

async function sqs<T>(action: 'SendMessage' | 'SendMessageBatch', input: object): Promise<T> {
  const { region, sqsEndpoint } = config();
  endpoint ??= new URL(sqsEndpoint ?? `https://sqs.${region}.amazonaws.com/`);
  const reply = await signedFetch(
    'sqs',
    'POST',
    endpoint,
    { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` },
    JSON.stringify(input),
  );
  const text = reply.text();
  if (reply.ok) return (text ? JSON.parse(text) : {}) as T;
  let why = '';
  try {
    const e = JSON.parse(text) as { __type?: string; message?: string; Message?: string };
    why = `${String(e.__type ?? '').split('#').pop()}: ${e.message ?? e.Message ?? ''}`;
  } catch {
    // not JSON: the status says enough
  }
  throw new Error(`SQS ${action} answered ${reply.status} ${why}`.trim());
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
