// DynamoDB stream → for each new user message of a bot with a webhook, one job on its bot's webhook lane (and
// one for each answer to the bot's interactive messages); for the
// first reply of a burst, with unread reminders on, the reminder's job, delayed until due; for each message
// that attaches uploaded files, those files kept as the bot's retention says (and given back to the user's
// storage quota); for each removed file record, its object deleted (and its bytes given back if never sent);
// for a bot whose retention was set, the task that re-dates its messages and files (lib/consumers.ts
// WEBHOOK_DISPATCHER).
// It only queues (never calls a receiver), so a slow or failing webhook cannot hold back the stream. Each user's
// records run in order, users side by side (lambdas/aws/stream-batch.ts).
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { botFromItem, getBot } from '../entities/bots';
import { fileFromItem, forgetFileObject } from '../entities/files';
import { exportFromItem } from '../entities/exports';
import { keepSentFiles } from '../flows/files-sent';
import { releaseRemovedFile } from '../policies/storage-quota';
import { scheduleReminder } from '../flows/reminders';
import { startRetentionTask } from '../flows/retention-task';
import { messageFromItem, type MessageItem } from '../entities/messages';
import type { WebhookJob } from '../flows/webhook-events';
import { queueJob, queueJobs } from '../flows/webhook-lanes';
import { config } from '../shared/config';
import { log } from '../shared/log';
import { processStreamBatch, withRetries } from '../aws/stream-batch';
import { isRedoBatch, redoBatch, streamRedo } from '../flows/stream-redo';
import { entityOf, streamImage, streamOwner } from '../aws/dynamo';

const FAILURE_LOG = 'a stream record failed; the batch will be retried from it';

/**
 * One try of a record at its slowest: a reminder's three calls (the chat read, the reminder's put, its delayed
 * job), each AWS call bounded at 7 s (lib/function-def.ts AWS_CALL_SECONDS).
 */
const RECORD_BUDGET_MS = 3 * 7_000;

export async function handler(event: DynamoDBStreamEvent | SQSEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  const jobs: WebhookJob[] = [];
  const redoUrl = config().dispatcherRedoQueueUrl;
  const steps = {
    lane: streamOwner,
    step: async (record: DynamoDBRecord) => {
      const job = await dispatch(record);
      if (job) jobs.push(job);
    },
    logFailure: (record: DynamoDBRecord, err: unknown) => log('error', FAILURE_LOG, { sequence_number: record.dynamodb?.SequenceNumber }, err),
    recordBudgetMs: RECORD_BUDGET_MS,
    // No hold: what a record asks for needs no other record done first (a job per message, its id the webhook's;
    // a reminder decided from the chat as it is), so a user's later records need not wait for one set aside.
    setAside: redoUrl ? streamRedo(redoUrl) : undefined,
  };
  // Each user's records in stream order, users side by side; a record that keeps failing goes aside with its
  // user's later ones in this batch (and, from the redo queue, runs again in that order).
  const redo = isRedoBatch(event);
  const response = redo ? await redoBatch(event, steps) : await processStreamBatch(event, steps, context);
  // The jobs of the records done, each on its bot's lane (flows/webhook-lanes.ts), tried as a record is: receivers dedupe by X-Webhook-Id if one went twice.
  const queued = jobs.length ? await withRetries(() => queueJobs(jobs)) : { ok: true as const };
  if (!queued.ok) {
    log('error', FAILURE_LOG, {}, queued.err);
    // Queueing is all or nothing here: every record again (a stream batch retries from its first).
    const ids = redo ? event.Records.map((m) => m.messageId) : event.Records.slice(0, 1).map((r) => r.dynamodb?.SequenceNumber ?? '');
    return { batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })) };
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
    if (entityOf(item) === 'message') return answerJob(messageFromItem(old), messageFromItem(item));
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

/**
 * A bot's interactive message just answered (recorded once: the old image has no submitted_values): its
 * message.response job, if the bot has a webhook. An edit, a retention re-date or a repeated answer changes
 * the message without newly answering it: nothing. A redelivered record queues it again, with the same id.
 */
async function answerJob(before: MessageItem, after: MessageItem): Promise<WebhookJob | undefined> {
  if (before.submitted_values !== undefined || after.submitted_values === undefined || after.sender_type !== 'outcoming') return undefined;
  const bot = await getBot(after.bot_id);
  if (!bot?.webhook_url) return undefined;
  return { event_type: 'message.response', bot_id: bot.id, message: after, attempt: 0 };
}

/** A new message's webhook part: a user message's job (queued with the batch's), or a reply's reminder. */
async function webhookStep(message: MessageItem, bot: Awaited<ReturnType<typeof getBot>>): Promise<WebhookJob | undefined> {
  // Marked at the send from the bot's settings then (a message taken for its files alone has no webhook).
  if (!message.webhook || !bot?.webhook_url) return undefined;
  if (message.sender_type === 'incoming') return { bot_id: bot.id, message, attempt: 0 };
  if (bot.unread_reminder_seconds) {
    // A reply of the bot side: its burst's reminder, queued once with the delay left.
    const due = await scheduleReminder(message, bot.unread_reminder_seconds);
    if (due) await queueJob(due.job, due.delaySeconds);
  }
  return undefined;
}
