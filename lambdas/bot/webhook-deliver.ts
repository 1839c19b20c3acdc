// Webhook queues (SQS, both lanes) → one signed POST per job (a user message's event, an answer's, or a due unread reminder). A
// failure is queued again with a growing delay; after the last retry the job goes to the dead-letter queue and is
// logged. A delivery the address rule refuses (a private or loopback address) goes there at once, never retried.
// Jobs run in parallel, so one bot's failing receiver never delays another bot's events; a receiver that runs to
// the timeout puts its bot on the slow lane (flows/webhook-lanes.ts), so it cannot take the fast lane's slots.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { getBot, type Bot } from '../entities/bots';
import { config, requireEnv } from '../shared/config';
import { sendToQueue } from '../aws/sqs';
import { buildWebhookEvent, mayStillSend, webhookId } from '../flows/webhook-events';
import { laneOf, markBotSlow, queueJob, withoutLane, type LaneJob } from '../flows/webhook-lanes';
import { deliver } from '../adapters/webhooks';
import { log } from '../shared/log';
import { fireReminder, reminderId } from '../flows/reminders';

type Job = LaneJob;

const jobFields = (job: Job) =>
  job.kind === 'reminder' ? { bot_id: job.bot_id, chat_id: job.chat_id, reminder_burst: job.burst, attempt: job.attempt } : { bot_id: job.bot_id, message_id: job.message.id, event: job.event_type ?? 'message.created', attempt: job.attempt };

/** The event of a job and its X-Webhook-Id; a reminder is built once (at its first attempt), or not at all. */
async function eventOf(job: Job, token: string, bot: Bot): Promise<{ id: string; event: { event: string }; retry: Job } | undefined> {
  if (job.kind !== 'reminder') {
    const event = await buildWebhookEvent(job, bot);
    if (!event) log('info', 'webhook not sent: the user was erased, or the chat is gone', jobFields(job));
    return event && { id: webhookId(job), event, retry: job };
  }
  // A retry carries the event it built; its user may have been erased since (fireReminder checks a first attempt).
  if (job.event && !(await mayStillSend(job))) return undefined;
  const event = job.event ?? (await fireReminder(job, token, bot));
  if (!event) {
    log('info', 'reminder not sent: already sent for this burst, or every reply read', jobFields(job));
    return undefined;
  }
  return { id: reminderId(event), event, retry: { ...job, event } };
}

/** `token`: the queue message's id, the same on SQS's redeliveries of it (a reminder claimed by it can fire again). */
async function handle(job: Job, token: string): Promise<void> {
  const bot = await getBot(job.bot_id);
  if (!bot?.webhook_url || !bot.webhook_secret) return; // the webhook was removed meanwhile
  if (job.kind === 'reminder' && !job.event && !bot.unread_reminder_seconds) return; // reminders turned off meanwhile
  if (job.lane !== 'slow' && (await laneOf(bot.id)) === 'slow') {
    // Queued before its bot was marked slow: it moves to the slow lane rather than wait out a timeout in a fast slot.
    log('info', 'webhook moved to the slow lane: its receiver timed out lately', jobFields(job));
    await queueJob(job, 0, 'slow');
    return;
  }
  const built = await eventOf(job, token, bot);
  if (!built) return;
  const result = await deliver(bot.webhook_url, bot.webhook_secret, built.id, built.event);
  if (result.ok) return;
  if (result.refused) {
    // The address rule (adapters/webhook-target.ts) refused it: nothing was sent, and a retry would be refused too.
    log('error', 'webhook refused by the address rule; sent to the dead-letter queue without retries', { ...jobFields(job), reason: result.reason });
    await deadLetter(built.retry, result.reason, bot.webhook_url);
    return;
  }
  if (result.timedOut) await markBotSlow(bot.id);
  const delays = config().webhookRetryDelays;
  if (job.attempt < delays.length) {
    log('info', 'webhook failed; retrying later', { ...jobFields(job), reason: result.reason, retry_in_s: delays[job.attempt] });
    // A timeout's retry takes the slow lane at once; any other's, its bot's lane then.
    await queueJob({ ...built.retry, attempt: job.attempt + 1 }, delays[job.attempt], result.timedOut ? 'slow' : undefined);
    return;
  }
  log('error', 'webhook failed after every retry; sent to the dead-letter queue', { ...jobFields(job), reason: result.reason });
  await deadLetter(built.retry, result.reason, bot.webhook_url);
}

/** The job, as first queued (whichever lane failed it), with why and where it failed. */
const deadLetter = (job: Job, reason: string, url: string) =>
  sendToQueue(config().webhookDlqUrl ?? requireEnv('WEBHOOK_DLQ_URL'), { ...withoutLane(job), reason, url });

const processor = new BatchProcessor(EventType.SQS);

/** One record; a throw is our own failure (a read or a queue write): logged, and SQS redelivers that record. */
async function record(r: SQSRecord): Promise<void> {
  try {
    await handle(JSON.parse(r.body) as Job, r.messageId);
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
