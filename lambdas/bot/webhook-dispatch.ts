// DynamoDB stream → for each new user message of a bot with a webhook, one job on the webhook queue; for the
// first reply of a burst, with unread reminders on, the reminder's job, delayed until due; for each message
// that attaches uploaded files, those files kept as the bot's retention says (and given back to the user's
// storage quota); for each removed file record, its object deleted (and its bytes given back if never sent);
// for a bot whose retention was set, the task that re-dates its messages and files (lib/consumers.ts
// WEBHOOK_DISPATCHER).
// It only queues (never calls a receiver), so a slow or failing webhook cannot hold back the stream. Records run
// through Powertools' batch processor (lambdas/aws/stream-batch.ts).
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { botFromItem, getBot } from '../entities/bots';
import { fileFromItem, forgetFileObject } from '../entities/files';
import { exportFromItem } from '../entities/exports';
import { keepSentFiles } from '../flows/files-sent';
import { releaseRemovedFile } from '../policies/storage-quota';
import { config, requireEnv } from '../shared/config';
import { sendBatchToQueue, sendToQueue } from '../aws/sqs';
import { scheduleReminder } from '../flows/reminders';
import { startRetentionTask } from '../flows/retention-task';
import { messageFromItem, type MessageItem } from '../entities/messages';
import type { WebhookJob } from '../flows/webhook-events';
import { log } from '../shared/log';
import { processStreamBatch } from '../aws/stream-batch';
import { entityOf, streamImage } from '../aws/dynamo';

const queueUrl = () => config().webhookQueueUrl ?? requireEnv('WEBHOOK_QUEUE_URL');
const FAILURE_LOG = 'a stream record failed; the batch will be retried from it';

export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const jobs: WebhookJob[] = [];
  // One record after another; a failure holds back every later record (the retry starts at it).
  const response = await processStreamBatch(event, {
    prepare: async (record) => {
      const job = await dispatch(record);
      if (job) jobs.push(job);
      return undefined;
    },
    logFailure: (record, err) => log('error', FAILURE_LOG, { sequence_number: record.dynamodb?.SequenceNumber }, err),
  });
  try {
    // The jobs of the records before a failed one: the retry starts at the failed record.
    if (jobs.length) await sendBatchToQueue(queueUrl(), jobs);
  } catch (err) {
    log('error', FAILURE_LOG, {}, err);
    // Queueing is all or nothing here: retry from the first record (receivers dedupe by X-Webhook-Id).
    return { batchItemFailures: event.Records.slice(0, 1).map((r) => ({ itemIdentifier: r.dynamodb?.SequenceNumber ?? '' })) };
  }
  return response;
}

/** What one record asks for: done here, except a user message's webhook job, returned to be queued with the batch's. */
async function dispatch(record: DynamoDBRecord): Promise<WebhookJob | undefined> {
  const [old, item] = [streamImage(record.dynamodb?.OldImage), streamImage(record.dynamodb?.NewImage)];
  if (record.eventName === 'REMOVE' && old) {
    if (entityOf(old) === 'file') {
      const file = fileFromItem(old);
      await forgetFileObject(file);
      await releaseRemovedFile(file);
    }
    if (entityOf(old) === 'export') await forgetFileObject(exportFromItem(old));
    return undefined;
  }
  if (record.eventName === 'MODIFY' && item && old) {
    if (entityOf(item) !== 'bot') return undefined;
    const [before, after] = [botFromItem(old), botFromItem(item)];
    if (before.retention_set_at !== after.retention_set_at) await startRetentionTask(after.id, after.updated_at, after.retention_days);
    return undefined;
  }
  if (record.eventName !== 'INSERT' || !item || entityOf(item) !== 'message') return undefined;
  const message = messageFromItem(item);
  const bot = await getBot(message.bot_id);
  // Its files and its webhook side by side: a record waits on the longer of the two, not on both.
  const [, job] = await Promise.all([message.attaches && keepSentFiles(message, bot ?? {}), webhookStep(message, bot)]);
  return job;
}

/** A new message's webhook part: a user message's job (queued with the batch's), or a reply's reminder. */
async function webhookStep(message: MessageItem, bot: Awaited<ReturnType<typeof getBot>>): Promise<WebhookJob | undefined> {
  // Marked at the send from the bot's settings then (a message taken for its files alone has no webhook).
  if (!message.webhook || !bot?.webhook_url) return undefined;
  if (message.sender_type === 'incoming') return { bot_id: bot.id, message, attempt: 0 };
  if (bot.unread_reminder_seconds) {
    // A reply of the bot side: its burst's reminder, queued once with the delay left.
    const due = await scheduleReminder(message, bot.unread_reminder_seconds);
    if (due) await sendToQueue(queueUrl(), due.job, due.delaySeconds);
  }
  return undefined;
}
