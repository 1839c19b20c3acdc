// The webhook queue's two lanes. A bot whose receiver let a delivery run to the timeout is marked slow for a while
// (entities/slow-webhooks.ts); its jobs then go to the slow lane's queue, whose deliverer runs with a small
// concurrency of its own (lib/consumers.ts WEBHOOK_CONCURRENCY), so a hanging server takes none of the fast lane's
// slots. A job carries the lane it is on (`lane`), so the deliverer knows whether to check its bot's mark.
import { sendBatchToQueue, sendToQueue } from '../aws/sqs';
import { isMarkedSlow, markSlow } from '../entities/slow-webhooks';
import { config, requireEnv } from '../shared/config';
import type { ReminderJob } from './reminders';
import type { WebhookJob } from './webhook-events';

export type Lane = 'fast' | 'slow';
/** A job on either lane's queue; `lane` is set on the slow lane's only. */
export type LaneJob = (WebhookJob | ReminderJob) & { lane?: 'slow' };

const queueUrl = (lane: Lane): string =>
  lane === 'slow' ? (config().webhookSlowQueueUrl ?? requireEnv('WEBHOOK_SLOW_QUEUE_URL')) : (config().webhookQueueUrl ?? requireEnv('WEBHOOK_QUEUE_URL'));

/** The slow lane while the bot's mark lasts, the fast one otherwise. */
export const laneOf = async (botId: string): Promise<Lane> => ((await isMarkedSlow(botId)) ? 'slow' : 'fast');

/** The job as queued on `lane`. */
function onLane<J extends LaneJob>(job: J, lane: Lane): J {
  const { lane: _was, ...rest } = job;
  return (lane === 'slow' ? { ...rest, lane } : rest) as J;
}

/** The job as it was first queued, without its lane: what the dead-letter queue keeps, whichever lane failed it. */
export const withoutLane = <J extends LaneJob>(job: J): J => onLane(job, 'fast');

/** Queues jobs, each on its bot's lane (one mark read per bot, cached); throws if any send failed. */
export async function queueJobs(jobs: LaneJob[]): Promise<void> {
  const bots = [...new Set(jobs.map((j) => j.bot_id))];
  const lanes = new Map(await Promise.all(bots.map(async (id) => [id, await laneOf(id)] as const)));
  await Promise.all(
    (['fast', 'slow'] as const).map(async (lane) => {
      const on = jobs.filter((j) => lanes.get(j.bot_id) === lane).map((j) => onLane(j, lane));
      if (on.length) await sendBatchToQueue(queueUrl(lane), on);
    }),
  );
}

/** Queues one job after `delaySeconds`, on `lane` or, when not given, on its bot's. */
export async function queueJob(job: LaneJob, delaySeconds = 0, lane?: Lane): Promise<void> {
  const to = lane ?? (await laneOf(job.bot_id));
  await sendToQueue(queueUrl(to), onLane(job, to), delaySeconds);
}

/** A delivery to the bot ran to the timeout: its jobs take the slow lane for WEBHOOK_SLOW_SECONDS from now. */
export const markBotSlow = (botId: string): Promise<void> => markSlow(botId, config().webhookSlowSeconds);
