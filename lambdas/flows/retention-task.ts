// Setting a bot's retention_days (a change, or the same value again) re-dates what the bot has stored: the
// webhook dispatcher sees the bot's record change on the stream and starts a `retention` task; the task worker
// then sets (or, turned off, removes) the ttl of every message of the bot's chats and of every uploaded file
// under its prefix in the bucket, page by page, from the bot's setting as it is when each page is done. Reads
// already apply the new setting (policies/retention.ts); this makes DynamoDB's TTL, and through it S3, follow.
import { createHash } from 'node:crypto';
import { listKeysPage } from '../aws/s3';
import { config, TASK_TIME_MARGIN_MS } from '../shared/config';
import { readBot } from '../entities/bots';
import { botChatsWalk, listLayout, type WalkAt } from '../entities/chat-list';
import { botKeyPrefix, readFiles } from '../entities/files';
import { keys } from '../entities/keys';
import { redate } from '../entities/expiry';
import { chatMessageDates } from '../entities/messages';
import { expiryOf, type Retained } from '../policies/retention';
import { completeTask, putTask, queueTask, saveTaskCursor, type TaskRecord } from '../entities/tasks';
import { fileIdOfKey } from './uploads';

/** Chats re-dated per page (each one Query of its messages, then an update per message whose ttl differs). */
const CHATS_PER_PAGE = 25;
/** Updates in flight at once. */
const PARALLEL = 10;

/** One task per change: a redelivered stream record finds the same task (the bot's id and new updated_at). */
export function retentionTaskId(botId: string, updatedAt: string): string {
  const h = createHash('sha256').update(`retention:${botId}:${updatedAt}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The dispatcher's part, for a bot record whose retention_days was set (changed, or set again to do it over).
 * The job waits for the bot cache of every function to have expired and for requests in flight to end
 * (ERASE_DELAY_SECONDS), so no message written with the old setting comes after the walk has passed its chat.
 */
export async function startRetentionTask(botId: string, updatedAt: string, retentionDays: number | undefined): Promise<TaskRecord> {
  const task = await putTask({
    task_id: retentionTaskId(botId, updatedAt),
    kind: 'retention',
    status: 'pending',
    bot_id: botId,
    retention_days: retentionDays ?? 0,
    created_at: new Date().toISOString(),
  });
  // A running one has its job; a pending one may have lost it (queued again: a second run finds it done).
  if (task.status === 'pending') {
    await queueTask(task.task_id, Math.min(900, Math.ceil(config().botCacheTtlMs / 1000) + config().eraseDelaySeconds));
  }
  return task;
}

/**
 * The ttl a stored item gets: its expiry, and one already past as now (DynamoDB's TTL ignores times more than
 * five years past, and would keep such an item for ever).
 */
function datedTtl(bot: Retained, createdAt: string): number | undefined {
  const ttl = expiryOf(bot, Date.parse(createdAt));
  return ttl === undefined ? undefined : Math.max(ttl, Math.floor(Date.now() / 1000));
}

/**
 * Whether a stored item needs a new ttl: not when it has the one the setting gives, nor when both its ttl and
 * the setting's are already past (it is due for deletion either way: a run done again rewrites nothing).
 */
function needsTtl(bot: Retained, item: { created_at: string; ttl?: number }): boolean {
  const expiry = expiryOf(bot, Date.parse(item.created_at));
  const now = Math.floor(Date.now() / 1000);
  if (expiry !== undefined && expiry <= now && item.ttl !== undefined && item.ttl <= now) return false;
  return item.ttl !== datedTtl(bot, item.created_at);
}

/** `key`: a walk's place in the legacy gsi1 partition, as a cursor saved before the list had shards names it. */
type Cursor = { phase: 'chats'; at?: WalkAt; key?: Record<string, string> } | { phase: 'files'; token?: string };

/**
 * The worker's part: a page of chats, or of the bot's objects, at a time; the cursor saved after each, so a
 * run cut short (out of time, or a crash) goes on from the last page done. Every step sets a ttl to what the
 * setting says, so doing a page twice changes nothing. True once done and the task completed.
 */
export async function applyRetention(task: TaskRecord, timeLeft: () => number): Promise<boolean> {
  let cursor: Cursor | undefined = task.cursor ? (JSON.parse(task.cursor) as Cursor) : { phase: 'chats' };
  const enough = () => timeLeft() > TASK_TIME_MARGIN_MS;
  while (cursor) {
    if (!enough()) return false;
    // Read for each page: another change of the retention meanwhile has its own task, which does it all again.
    const bot = await readBot(task.bot_id);
    if (!bot || (bot.retention_days ?? 0) !== task.retention_days) break;
    cursor = cursor.phase === 'chats' ? await chatsPage(task.bot_id, bot, enough, cursor.at ?? (cursor.key && { part: 'legacy', key: cursor.key })) : await filesPage(task.bot_id, bot, cursor.token);
    // Another run of the same task (a duplicate job) finished it: this one stops.
    if (cursor && !(await saveTaskCursor(task.task_id, JSON.stringify(cursor)))) return true;
  }
  await completeTask(task.task_id, {}, ['cursor']);
  return true;
}

/** Up to CHATS_PER_PAGE chats (entities/chat-list.ts walks every shard); out of time within the page, the cursor is the last chat done. */
async function chatsPage(botId: string, bot: Retained, enough: () => boolean, from?: WalkAt): Promise<Cursor> {
  const page = await botChatsWalk(botId, CHATS_PER_PAGE, await listLayout(), from);
  for (const chat of page.chats) {
    await redateChat(bot, chat.user_id, chat.id);
    if (!enough()) return { phase: 'chats', at: chat.at };
  }
  return page.next ? { phase: 'chats', at: page.next } : { phase: 'files' };
}

async function redateChat(bot: Retained, userId: string, chatId: string): Promise<void> {
  const due = (await chatMessageDates(userId, chatId)).filter((m) => needsTtl(bot, m));
  // An item deleted meanwhile is not re-dated (redate: false).
  await inParallel(due, (m) => redate(m.key, datedTtl(bot, m.created_at)));
}

/**
 * A page of the bot's objects: the sent files among them get the setting's ttl, counted from their last send
 * (an unsent one keeps its own expiry; the stream dates it when a message attaches it).
 */
async function filesPage(botId: string, bot: Retained, token?: string): Promise<Cursor | undefined> {
  const page = await listKeysPage(botKeyPrefix(botId), token);
  // Once each: a direct upload's sealed copy and its upload key (not yet deleted) name the same file.
  const ids = [...new Set(page.keys.map(fileIdOfKey).filter((id): id is string => Boolean(id)))];
  const records = await readFiles(ids, true);
  await inParallel(records, async (f) => {
    if (f.status === 'uploaded' && f.sent_at && needsTtl(bot, { ttl: f.ttl, created_at: f.sent_at })) await redate(keys.file(f.id), datedTtl(bot, f.sent_at), 'uploaded');
  });
  return page.next ? { phase: 'files', token: page.next } : undefined;
}

async function inParallel<T>(items: T[], run: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += PARALLEL) await Promise.all(items.slice(i, i + PARALLEL).map(run));
}
