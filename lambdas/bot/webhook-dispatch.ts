// DynamoDB stream → for each new user message of a bot with a webhook, one job on the webhook queue.
// It only queues (never calls a receiver), so a slow or failing webhook cannot hold back the stream.
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { getBot } from '../domain/bots';
import { config, requireEnv } from '../shared/config';
import { sendBatchToQueue } from '../aws/sqs';
import type { MessageItem } from '../domain/messages';
import type { WebhookJob } from '../domain/webhooks';
import { log } from '../shared/log';

export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const jobs: WebhookJob[] = [];
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) continue;
    const { pk: _pk, sk: _sk, entity, ...message } = unmarshall(image as Record<string, AttributeValue>);
    if (entity !== 'message' || message.sender_type !== 'incoming') continue;
    const bot = await getBot(message.bot_id);
    if (bot?.webhook_url) jobs.push({ bot_id: bot.id, message: message as MessageItem, attempt: 0 });
  }
  if (jobs.length === 0) return { batchItemFailures: [] };
  try {
    await sendBatchToQueue(config().webhookQueueUrl ?? requireEnv('WEBHOOK_QUEUE_URL'), jobs);
    return { batchItemFailures: [] };
  } catch (err) {
    log('error', 'could not queue webhooks; the batch will be retried', {}, err);
    // Queueing is all or nothing here: retry from the first record (receivers dedupe by X-Webhook-Id).
    return { batchItemFailures: [{ itemIdentifier: event.Records[0].dynamodb?.SequenceNumber ?? '' }] };
  }
}
