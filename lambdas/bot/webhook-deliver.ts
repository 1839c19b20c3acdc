// Webhook queue (SQS) → one signed POST per job. A failure is queued again with a growing delay; after the
// last retry the job goes to the dead-letter queue and is logged. Jobs run in parallel, so one bot's
// failing receiver never delays another bot's events.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { getBot } from '../domain/bots';
import { config, requireEnv } from '../shared/config';
import { sendToQueue } from '../aws/sqs';
import { buildWebhookEvent, deliver, type WebhookJob } from '../domain/webhooks';
import { log } from '../shared/log';

const jobFields = (job: WebhookJob) => ({ bot_id: job.bot_id, message_id: job.message.id, attempt: job.attempt });

async function handle(job: WebhookJob): Promise<void> {
  const bot = await getBot(job.bot_id);
  if (!bot?.webhook_url || !bot.webhook_secret) return; // the webhook was removed meanwhile
  const result = await deliver(bot.webhook_url, bot.webhook_secret, job.message.id, await buildWebhookEvent(job));
  if (result.ok) return;
  const delays = config().webhookRetryDelays;
  if (job.attempt < delays.length) {
    log('info', 'webhook failed; retrying later', { ...jobFields(job), reason: result.reason, retry_in_s: delays[job.attempt] });
    await sendToQueue(config().webhookQueueUrl ?? requireEnv('WEBHOOK_QUEUE_URL'), { ...job, attempt: job.attempt + 1 }, delays[job.attempt]);
    return;
  }
  log('error', 'webhook failed after every retry; sent to the dead-letter queue', { ...jobFields(job), reason: result.reason });
  await sendToQueue(config().webhookDlqUrl ?? requireEnv('WEBHOOK_DLQ_URL'), { ...job, reason: result.reason, url: bot.webhook_url });
}

const processor = new BatchProcessor(EventType.SQS);

/** One record; a throw is our own failure (a read or a queue write): logged, and SQS redelivers that record. */
async function record(r: SQSRecord): Promise<void> {
  try {
    await handle(JSON.parse(r.body) as WebhookJob);
  } catch (err) {
    log('error', 'webhook job failed; SQS will redeliver it', { sqs_message_id: r.messageId }, err);
    throw err;
  }
}

/**
 * Powertools' batch processing reports the records that threw (receiver failures are handled above, never
 * thrown); records run in parallel. A batch that fails whole is reported like any other, not thrown.
 */
export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  processPartialResponse(event, record, processor, { context, throwOnFullBatchFailure: false });
