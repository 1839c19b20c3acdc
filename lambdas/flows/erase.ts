// Erasing a user (Bot API DELETE /api/bot/users/{user_id}): at once the user's tokens are refused and no new
// session starts; then the task worker deletes everything that names the user, its chats or its files, in the
// table and the bucket. Every step is a delete of what is still there, so a run cut short and run again ends
// in the same state (docs/user-data.md "A visitor's data: find and erase" lists what goes and what stays).
import { deleteObject } from '../aws/s3';
import { newUuid } from '../shared/ids';
import { config, TASK_TIME_MARGIN_MS } from '../shared/config';
import { keys, type Key } from '../entities/keys';
import { revokeUser } from '../policies/revocation';
import { completeTask, putTask, queueTask, setTaskStatus, type TaskRecord } from '../entities/tasks';
import { claimErase, deleteUserItem, markUserErasing, userRef } from '../entities/users';
import { userData } from './user-data';
import { deleteItems, partitionItems, type PartitionItem } from '../entities/partition';

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
  const taskId = ref.erase_task ?? (await claimErase(userId, newUuid()));
  await markUserErasing(botId, ref.external_id, userId, taskId);
  const now = new Date().toISOString();
  const task = await putTask({ task_id: taskId, kind: 'erase', status: 'pending', bot_id: botId, user_id: userId, external_id: ref.external_id, created_at: now });
  if (task.status === 'failed' && (await setTaskStatus(taskId, 'pending', ['failed']))) task.status = 'pending';
  if (task.status !== 'completed') await queueTask(taskId, config().eraseDelaySeconds);
  return task;
}

const keyOf = ({ pk, sk }: PartitionItem): Key => ({ pk, sk });

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
  await deleteItems([...fileIds].map(keys.file));
  for (let i = 0; i < objects.length; i += 10) await Promise.all(objects.slice(i, i + 10).map(deleteObject));
  if (!enough()) return false;
  // Each chat's own partitions: pointer, reminder; idempotency keys.
  for (const chatId of chatIds) {
    const items = [...(await partitionItems(keys.chatPartition(chatId))), ...(await partitionItems(keys.idempotencyPartition(chatId)))];
    await deleteItems(items.map(keyOf));
    if (!enough()) return false;
  }
  for (const name of USER_RATE_LIMITS) await deleteItems((await partitionItems(keys.ratePartition(name, userId))).map(keyOf));
  // The user's own partition (chats, messages, markers, counters, references, exports and their tasks, which
  // name the export's key), its reference by id last: a run cut short is found again from it.
  const exportTasks = owned.flatMap((i) => (i.entity === 'export' && i.task_id ? [keys.task(i.task_id)] : []));
  await deleteItems([...exportTasks, ...owned.filter((i) => i.sk !== keys.userRef(userId).sk).map(keyOf)]);
  if (!enough()) return false;
  // The user item only if it is still this user's: once deleted, the external id may start a new user.
  await deleteUserItem(task.bot_id, task.external_id as string, userId);
  await deleteItems([keys.userRef(userId)]);
  await completeTask(task.task_id, {}, ['user_id', 'external_id']);
  return true;
}
