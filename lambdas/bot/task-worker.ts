// Task queue (SQS) → the Bot API's background tasks (erase a user, export one, apply a bot's new retention) and the data move. A task runs until done or until its
// invocation is nearly out of time, then queues its rest; a failure is redelivered by SQS and, after the last
// receive, the task says failed (asking again resumes it). Every step is idempotent: a redelivery, or a run
// cut short by a crash, ends in the same state.
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { eraseUser } from '../flows/erase';
import { exportUser } from '../flows/export';
import { applyRetention } from '../flows/retention-task';
import { migrateData } from '../flows/migrate';
import { failTask, queueTask, readTask, setTaskStatus, TASK_MAX_RECEIVES, type TaskJob } from '../entities/tasks';
import { closeUserConnections } from '../centrifuge/hub';
import { log } from '../shared/log';

async function run(job: TaskJob, context: Context): Promise<void> {
  const task = await readTask(job.task_id);
  if (!task || task.status === 'completed' || task.status === 'failed') return; // done, or waiting to be asked again
  await setTaskStatus(task.task_id, 'running', ['pending', 'running']);
  if (task.kind === 'export') return exportUser(task);
  const timeLeft = () => context.getRemainingTimeInMillis();
  let done: boolean;
  if (task.kind === 'retention') done = await applyRetention(task, timeLeft);
  else if (task.kind === 'migrate') done = await migrateData(task, timeLeft);
  else {
    await closeUserConnections(task.user_id as string);
    done = await eraseUser(task, timeLeft);
  }
  if (!done) {
    log('info', 'task continues in a new invocation', { task_id: task.task_id });
    await queueTask(task.task_id);
  }
}

const processor = new BatchProcessor(EventType.SQS);

async function record(r: SQSRecord, context: Context): Promise<void> {
  const job = JSON.parse(r.body) as TaskJob;
  // Received once more than it may run: every run failed, an error or a crash (a timeout never reaches a catch).
  if (Number(r.attributes.ApproximateReceiveCount) > TASK_MAX_RECEIVES) {
    const task = await readTask(job.task_id);
    log('error', 'task failed on every receive', { task_id: job.task_id });
    const again = { retention: 'set the retention again to start it over', migrate: 'start the move again (npm run bot -- migrate) to resume it' }[task?.kind as string] ?? 'ask again to resume it';
    if (task) await failTask(job.task_id, `The task stopped on an error on every try; ${again}`, task.kind);
    return;
  }
  try {
    await run(job, context);
  } catch (err) {
    log('error', 'task failed; SQS will redeliver it', { task_id: job.task_id }, err);
    throw err;
  }
}

export const handler = (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  processPartialResponse(event, record, processor, { context, throwOnFullBatchFailure: false });
