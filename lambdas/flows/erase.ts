// Erasing a user (Bot API DELETE /api/bot/users/{user_id}): at once the user's tokens are refused and no new
// session starts; then the task worker deletes everything that names the user, its chats or its files, in the
// table and the bucket. Every step is a delete of what is still there, so a run cut short and run again ends
// in the same state (docs/user-data.md "A visitor's data: find and erase" lists what goes and what stays).
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, dynamo, isConditionFailed, tableName, type WriteRequest } from '../aws/dynamo';
import { deleteObject } from '../aws/s3';
import { newUuid } from '../shared/ids';
import { config, TASK_TIME_MARGIN_MS } from '../shared/config';
import { keys, type Key } from '../entities/keys';
import { revokeUser } from '../policies/revocation';
import { completeTask, putTask, queueTask, setTaskStatus, type TaskRecord } from '../entities/tasks';
import { userRef } from '../entities/users';
import { userData } from './user-data';
import { partitionItems, type PartitionItem } from '../entities/partition';

/** The rate limits whose subject is a user (their windows name the user id). */
const USER_RATE_LIMITS = ['messages', 'chats', 'uploads', 'reads'];

/**
 * The synchronous part: the user's tokens revoked, its user item and reference marked with the task (no new
 * session; a repeated DELETE finds the same task), the task recorded and queued. Sockets are the caller's
 * (centrifuge/hub.ts closeUserConnections). A repeated DELETE redoes each step; a failed task starts again.
 * The job waits ERASE_DELAY_SECONDS (15 s): a request that passed its checks before the DELETE answered has
 * finished (request handlers time out after 10 s) before the worker looks for what it wrote.
 */
export async function startErase(botId: string, userId: string): Promise<TaskRecord> {
  const ref = await userRef(botId, userId);
  await revokeUser(userId);
  const taskId = ref.erase_task ?? (await claimErase(userId));
  await markUserItem(botId, ref.external_id, userId, taskId);
  const now = new Date().toISOString();
  const task = await putTask({ task_id: taskId, kind: 'erase', status: 'pending', bot_id: botId, user_id: userId, external_id: ref.external_id, created_at: now });
  if (task.status === 'failed' && (await setTaskStatus(taskId, 'pending', ['failed']))) task.status = 'pending';
  if (task.status !== 'completed') await queueTask(taskId, config().eraseDelaySeconds);
  return task;
}

/** The reference names the erase task; concurrent DELETEs agree on the first one's. */
async function claimErase(userId: string): Promise<string> {
  const out = await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.userRef(userId),
      UpdateExpression: 'SET erase_task = if_not_exists(erase_task, :task)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':task': newUuid() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return out.Attributes?.erase_task as string;
}

/** The user item (found by external id) refuses new sessions while the erasure runs (entities/users.ts). */
async function markUserItem(botId: string, externalId: string, userId: string, taskId: string): Promise<void> {
  await dynamo
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.user(botId, externalId),
        UpdateExpression: 'SET erase_task = :task',
        ConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':task': taskId, ':id': userId },
      }),
    )
    .catch((err) => {
      if (!isConditionFailed(err)) throw err; // already deleted by an earlier run
    });
}

const keyOf = ({ pk, sk }: PartitionItem): Key => ({ pk, sk });
const deletes = (items: Key[]): WriteRequest[] => items.map((Key) => ({ DeleteRequest: { Key } }));

/**
 * The worker's part. `timeLeft` says how long the invocation may still run: when it gets short the erasure
 * stops between steps and returns false (the worker queues the rest). True once nothing of the user is left
 * and the task says completed, its record then naming no id of the user.
 */
export async function eraseUser(task: TaskRecord, timeLeft: () => number): Promise<boolean> {
  const userId = task.user_id as string;
  const enough = () => timeLeft() > TASK_TIME_MARGIN_MS;
  // Files: every object under the user's prefix (attached or not, the bot's too, exports), every record found.
  const { owned, chatIds, fileIds, objects } = await userData(task.bot_id, userId);
  await batchWrite(deletes([...fileIds].map(keys.file)));
  for (let i = 0; i < objects.length; i += 10) await Promise.all(objects.slice(i, i + 10).map(deleteObject));
  if (!enough()) return false;
  // Each chat's own partitions: pointer, reminder; idempotency keys.
  for (const chatId of chatIds) {
    const items = [...(await partitionItems(keys.chatPartition(chatId))), ...(await partitionItems(keys.idempotencyPartition(chatId)))];
    await batchWrite(deletes(items.map(keyOf)));
    if (!enough()) return false;
  }
  for (const name of USER_RATE_LIMITS) await batchWrite(deletes((await partitionItems(keys.ratePartition(name, userId))).map(keyOf)));
  // The user's own partition (chats, messages, markers, counters, references, exports and their tasks, which
  // name the export's key), its reference by id last: a run cut short is found again from it.
  const exportTasks = owned.flatMap((i) => (i.entity === 'export' && i.task_id ? [keys.task(i.task_id)] : []));
  await batchWrite(deletes([...exportTasks, ...owned.filter((i) => i.sk !== keys.userRef(userId).sk).map(keyOf)]));
  if (!enough()) return false;
  // The user item only if it is still this user's: once deleted, the external id may start a new user.
  await dynamo.send(
    new DeleteCommand({
      TableName: tableName(),
      Key: keys.user(task.bot_id, task.external_id as string),
      ConditionExpression: 'attribute_not_exists(pk) OR id = :id',
      ExpressionAttributeValues: { ':id': userId },
    }),
  ).catch((err) => {
    if (!isConditionFailed(err)) throw err;
  });
  await batchWrite(deletes([keys.userRef(userId)]));
  await completeTask(task.task_id, {}, ['user_id', 'external_id']);
  return true;
}
