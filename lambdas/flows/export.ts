// Exporting a user (Bot API POST /api/bot/users/{user_id}/export): the task worker writes one NDJSON file of
// everything the user has (`{type: "user", user}`, each `{type: "chat", chat}` followed by its
// `{type: "message", message}` lines in order, each `{type: "file", file}` with a presigned URL) under the user's prefix in the bucket; the task hands out a presigned GET of it for a day. An
// item with a TTL stands for the file: when DynamoDB removes it, the webhook dispatcher deletes the object.
import { deleteObject, presignedGetUrl, putObject } from '../aws/s3';
import { ConflictError } from '../shared/errors';
import { byCodeUnits, newUuid } from '../shared/ids';
import { getBot } from '../entities/bots';
import { listChats } from './chats';
import { readFiles, toUploadJson, userKeyPrefix } from '../entities/files';
import { allMessages } from './history';
import { deleteExportItem, putExportItem } from '../entities/exports';
import { toMessage } from '../entities/messages';
import { isRetained, retentionWindow } from '../policies/retention';
import { isRevoked } from '../policies/revocation';
import { completeTask, failTask, putTask, queueTask, type TaskRecord } from '../entities/tasks';
import { userData } from './user-data';
import { findUser, userRef } from '../entities/users';

/** How long an export can be downloaded (its object is then deleted). */
export const EXPORT_KEEP_SECONDS = 24 * 3600;
/** How long one download URL of it is valid. */
export const DOWNLOAD_URL_SECONDS = 3600;
const AS_DOWNLOAD = { contentType: 'application/x-ndjson', disposition: 'attachment; filename="user-export.ndjson"' };

export const exportKey = (botId: string, userId: string, taskId: string): string => `${userKeyPrefix(botId, userId)}exports/${taskId}.ndjson`;

/** How long an export's task and item last before the export completes (then: EXPORT_KEEP_SECONDS from then). */
const PENDING_KEEP_SECONDS = 2 * 86400;

/**
 * The task, queued; a user being erased has nothing to export (409). The export's item is put at once, in the
 * user's partition: an erasure finds the task from it (and deletes both) whatever state the export is in.
 */
export async function startExport(botId: string, userId: string): Promise<TaskRecord> {
  const ref = await userRef(botId, userId);
  if (ref.erase_task) throw new ConflictError('This user is being erased; there is nothing to export');
  const ttl = Math.floor(Date.now() / 1000) + PENDING_KEEP_SECONDS;
  const task: TaskRecord = { task_id: newUuid(), kind: 'export', status: 'pending', bot_id: botId, user_id: userId, external_id: ref.external_id, created_at: new Date().toISOString(), ttl };
  await putExportItem(userId, { task_id: task.task_id, ttl });
  await putTask(task);
  await queueTask(task.task_id);
  return task;
}

/** An export that raced an erasure: its file and item go (the erasure has taken, or takes, the task). */
async function withdraw(userId: string, taskId: string, key: string): Promise<void> {
  await deleteObject(key);
  await deleteExportItem(userId, taskId);
}

/** The worker's part: writes the file, its expiring item, and completes the task (which then names no user). */
export async function exportUser(task: TaskRecord): Promise<void> {
  const userId = task.user_id as string;
  if (await isRevoked(userId)) return failTask(task.task_id, 'The user has been erased; there is nothing to export', 'export');
  const user = await findUser(task.bot_id, task.external_id as string);
  const data = await userData(task.bot_id, userId);
  // What the bot's retention keeps, as the APIs show it.
  const w = retentionWindow((await getBot(task.bot_id)) ?? {});
  const lines: unknown[] = [{ type: 'user', user }];
  const chats = (await listChats(userId, w)).sort((a, b) => byCodeUnits(a.created_at, b.created_at) || byCodeUnits(a.id, b.id));
  for (const chat of chats) {
    lines.push({ type: 'chat', chat });
    for (const m of await allMessages(userId, chat.id, w)) lines.push({ type: 'message', message: await toMessage(m) });
  }
  const files = (await readFiles([...data.fileIds], true)).filter((f) => isRetained(f, w));
  for (const f of files.sort((a, b) => byCodeUnits(a.created_at, b.created_at))) lines.push({ type: 'file', file: await toUploadJson(f) });
  const key = exportKey(task.bot_id, userId, task.task_id);
  await putObject(key, Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n') + '\n'), AS_DOWNLOAD.contentType, AS_DOWNLOAD.disposition);
  const expires = Math.floor(Date.now() / 1000) + EXPORT_KEEP_SECONDS;
  await putExportItem(userId, { task_id: task.task_id, s3_key: key, ttl: expires });
  // Erased meanwhile (after this export's reads): nothing of the user may stay behind.
  if (await isRevoked(userId)) return withdraw(userId, task.task_id, key);
  // The task lasts as long as its file (its download_key names the user): an erasure finds it from that item.
  const completed = await completeTask(task.task_id, { download_key: key, expires_at: new Date(expires * 1000).toISOString() }, ['user_id', 'external_id'], expires);
  if (!completed) await withdraw(userId, task.task_id, key);
}

/** A completed export's download URL while it lasts (1 hour each); none once it expired. */
export function downloadUrl(task: TaskRecord): Promise<string> | undefined {
  if (!task.download_key || !task.expires_at || Date.parse(task.expires_at) <= Date.now()) return undefined;
  return presignedGetUrl(task.download_key, DOWNLOAD_URL_SECONDS, AS_DOWNLOAD);
}
