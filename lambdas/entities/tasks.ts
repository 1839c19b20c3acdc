// The Bot API's background tasks (erase a user, export one, apply a new retention) and the data move (migrate): a record the bot polls, and a job on the task
// queue that the task worker (lambdas/bot/task-worker.ts) runs, resumably, until the record says completed.
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, conditionMet, dynamo, isConditionFailed, optional, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { sendToQueue } from '../aws/sqs';
import { config, requireEnv } from '../shared/config';
import { NotFoundError } from '../shared/errors';
import { keys } from './keys';
import { isPastTtl } from './expiry';

export type TaskKind = 'erase' | 'export' | 'retention' | 'migrate';
export type TaskStatus = 'pending' | 'running' | 'completed' | 'failed';

export interface TaskRecord {
  task_id: string;
  kind: TaskKind;
  status: TaskStatus;
  bot_id: string;
  /** The user's ids while the task runs; an erase removes them from its record when it completes. */
  user_id?: string;
  external_id?: string;
  error?: string;
  /** An export's object in the bucket, and until when it can be downloaded. */
  download_key?: string;
  expires_at?: string;
  /** Where a task that walks many items goes on from (retention: flows/retention-task.ts). */
  cursor?: string;
  /** A retention task: the retention_days it applies (0: off); another change of it supersedes the task. */
  retention_days?: number;
  created_at: string;
  completed_at?: string;
  ttl?: number;
}

/** The codec: a task item as DynamoDB returns it (its keys and `entity` left behind). */
export const taskFromItem = (raw: RawItem): TaskRecord => {
  const item = raw as Stored<TaskRecord>;
  return {
    task_id: item.task_id,
    kind: item.kind,
    status: item.status,
    bot_id: item.bot_id,
    created_at: item.created_at,
    ...optional(item, 'user_id', 'external_id', 'error', 'download_key', 'expires_at', 'cursor', 'retention_days', 'completed_at', 'ttl'),
  };
};

/** What the worker's queue carries: the task's id only (the record holds the rest). */
export interface TaskJob {
  task_id: string;
}

/**
 * Runs of a task's job before it is failed: the receive after the last run marks the task failed, and SQS
 * dead-letters the job after that (lib/consumers.ts TASK_QUEUE: maxReceiveCount = this + 1).
 */
export const TASK_MAX_RECEIVES = 5;

/** How long a finished task can still be read (its record then expires). */
export const TASK_KEEP_SECONDS = 30 * 86400;

/** Puts a new task; an existing one (a repeated request) is left as it is. Returns the stored one. */
export async function putTask(task: TaskRecord): Promise<TaskRecord> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.task(task.task_id), entity: 'task', ...task },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return task;
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    // The stored task comes back with the refusal; read it should the reply lack it.
    const stored = conditionFailedItem(err);
    return stored ? taskFromItem(stored) : ((await readTask(task.task_id)) ?? task);
  }
}

export async function readTask(taskId: string): Promise<TaskRecord | undefined> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.task(taskId), ConsistentRead: true }));
  return out.Item && taskFromItem(out.Item);
}

/**
 * The bot's task (GET /api/bot/tasks/{task_id}): another bot's, or none, is a 404; so is one kept past its
 * ttl, which DynamoDB may take days to delete (read as of `nowMs`).
 */
export async function botTask(botId: string, taskId: string, nowMs = Date.now()): Promise<TaskRecord> {
  const task = await readTask(taskId);
  if (!task || task.bot_id !== botId || isPastTtl(task, nowMs)) throw new NotFoundError('Task not found');
  return task;
}

/** A failed task asked for again starts over as pending (the work is idempotent: it resumes where it stopped). */
export async function setTaskStatus(taskId: string, status: 'running' | 'pending', from: TaskStatus[]): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.task(taskId),
        UpdateExpression: 'SET #status = :to REMOVE #error',
        ConditionExpression: '#status IN (' + from.map((_, i) => `:f${i}`).join(', ') + ')',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
        ExpressionAttributeValues: { ':to': status, ...Object.fromEntries(from.map((f, i) => [`:f${i}`, f])) },
      }),
    ),
  );
}

/**
 * Done: kept `keepUntil` (epoch seconds; TASK_KEEP_SECONDS from now by default) for the bot to read; `forget`
 * names fields the record must no longer hold. False when the record is gone (an erasure deleted an export's).
 */
export async function completeTask(taskId: string, set: Record<string, string> = {}, forget: string[] = [], keepUntil?: number): Promise<boolean> {
  const names = Object.keys(set);
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.task(taskId),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression:
          'SET #status = :done, completed_at = :now, #ttl = :ttl' +
          names.map((n, i) => `, #s${i} = :s${i}`).join('') +
          (forget.length ? ' REMOVE ' + forget.map((_, i) => `#f${i}`).join(', ') : ''),
        ExpressionAttributeNames: {
          '#status': 'status',
          '#ttl': 'ttl',
          ...Object.fromEntries(names.map((n, i) => [`#s${i}`, n])),
          ...Object.fromEntries(forget.map((f, i) => [`#f${i}`, f])),
        },
        ExpressionAttributeValues: {
          ':done': 'completed',
          ':now': new Date().toISOString(),
          ':ttl': keepUntil ?? Math.floor(Date.now() / 1000) + TASK_KEEP_SECONDS,
          ...Object.fromEntries(names.map((n, i) => [`:s${i}`, set[n]])),
        },
      }),
    ),
  );
}

/**
 * Every retry failed: the bot sees why; the same DELETE resumes an erasure (its record keeps the user's ids for
 * that). A failed export forgets the user; it and a failed retention task are kept TASK_KEEP_SECONDS (asking
 * again, or setting the retention again, starts a new one).
 */
export async function failTask(taskId: string, error: string, kind: TaskKind = 'erase'): Promise<void> {
  const forget = kind === 'export';
  const expire = kind !== 'erase';
  // A task already completed stays so.
  await conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.task(taskId),
        UpdateExpression: 'SET #status = :failed, #error = :error' + (expire ? ', #ttl = :ttl' : '') + (forget ? ' REMOVE user_id, external_id' : ''),
        ConditionExpression: 'attribute_exists(pk) AND #status <> :done',
        ExpressionAttributeNames: { '#status': 'status', '#error': 'error', ...(expire && { '#ttl': 'ttl' }) },
        ExpressionAttributeValues: { ':failed': 'failed', ':error': error, ':done': 'completed', ...(expire && { ':ttl': Math.floor(Date.now() / 1000) + TASK_KEEP_SECONDS }) },
      }),
    ),
  );
}

/**
 * Records how far a running task got: a later run (a redelivery, the rest queued) goes on from there. False
 * when the task is no longer running (another run of it completed it).
 */
export async function saveTaskCursor(taskId: string, cursor: string): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.task(taskId),
        UpdateExpression: 'SET #cursor = :cursor',
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { '#cursor': 'cursor', '#status': 'status' },
        ExpressionAttributeValues: { ':cursor': cursor, ':running': 'running' },
      }),
    ),
  );
}

/** Queues the task's job; `delaySeconds` lets requests already past their checks finish first (erase). */
export async function queueTask(taskId: string, delaySeconds = 0): Promise<void> {
  const job: TaskJob = { task_id: taskId };
  await sendToQueue(config().taskQueueUrl ?? requireEnv('TASK_QUEUE_URL'), job, delaySeconds);
}

export interface TaskJson {
  task_id: string;
  kind: TaskKind;
  status: TaskStatus;
  error?: string;
  download_url?: string;
  created_at: string;
  completed_at?: string;
}

export function toTaskJson(task: TaskRecord, downloadUrl?: string): TaskJson {
  return {
    task_id: task.task_id,
    kind: task.kind,
    status: task.status,
    ...(task.error && { error: task.error }),
    ...(downloadUrl && { download_url: downloadUrl }),
    created_at: task.created_at,
    ...(task.completed_at && { completed_at: task.completed_at }),
  };
}
