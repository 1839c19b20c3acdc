// The move of stored data to the key layout this code writes (docs/scale.md "Upgrading a stage"): users off
// their bot's partition into their own, chats' list entries off gsi1 onto the sharded gsi2 (or into their shard
// after CHAT_LIST_SHARDS changed). One `migrate` task scans the table a page at a time, its cursor in the task
// item, and writes the layout marker when done; until then reads look at both layouts (entities/layout.ts).
// Every move is conditional on the item as read, so doing a page again, or two runs at once, changes nothing more.
import { createHash } from 'node:crypto';
import { scanPage, type RawItem } from '../aws/dynamo';
import { config, TASK_TIME_MARGIN_MS } from '../shared/config';
import { log } from '../shared/log';
import { keys } from '../entities/keys';
import { forgetLayout, isCurrent, LAYOUT_VERSION, readLayout, writeLayout } from '../entities/layout';
import { moveLegacyUser, moveLegacyUserOf } from '../entities/legacy-users';
import { chatNeedsMove, moveChatListEntry } from '../entities/chat-moves';
import { completeTask, putTask, queueTask, readTask, saveTaskCursor, setTaskStatus, type TaskRecord } from '../entities/tasks';

/** Moves in flight at once. */
const PARALLEL = 10;

/** One task per target layout: a second start finds the same task (and a running one is not started twice). */
export function migrateTaskId(shards: number): string {
  const h = createHash('sha256').update(`migrate:${LAYOUT_VERSION}:${shards}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Starts the move unless the marker says the table is at the current layout: the task put (or found), and
 * queued when it is pending or failed (a running one has its job). Returns the task, or undefined if nothing moves.
 */
export async function startMigration(): Promise<TaskRecord | undefined> {
  const task = await migrationTask();
  if (!task) return undefined;
  // Completed earlier for this layout, yet the marker says otherwise (the count changed and changed back): again.
  const again = task.status === 'failed' || task.status === 'completed';
  if (again && (await setTaskStatus(task.task_id, 'pending', ['failed', 'completed']))) task.status = 'pending';
  if (task.status === 'pending') await queueTask(task.task_id);
  log('info', 'data move started', { task_id: task.task_id, status: task.status });
  return task;
}

/** The task of the move to the current layout (put if new), or undefined when the marker says it is done. */
async function migrationTask(): Promise<TaskRecord | undefined> {
  const shards = config().chatListShards;
  if (isCurrent(await readLayout(), shards)) return undefined;
  return putTask({ task_id: migrateTaskId(shards), kind: 'migrate', status: 'pending', bot_id: '', created_at: new Date().toISOString() });
}

/**
 * The move run in this process to its end (the CLI: `npm run bot -- migrate`), from where the task got. A worker
 * running it at the same time does the same conditional moves: each item moves once.
 */
export async function migrateHere(): Promise<TaskRecord | undefined> {
  const task = await migrationTask();
  if (!task) return undefined;
  await setTaskStatus(task.task_id, 'running', ['pending', 'running', 'failed', 'completed']);
  // Each round goes on from the cursor the last one saved (MIGRATE_PAGES_PER_RUN pages at a time, if set).
  while (!(await migrateData((await readTask(task.task_id)) as TaskRecord, () => Number.POSITIVE_INFINITY)));
  return readTask(task.task_id);
}

/** A legacy user item: `BOT#<bot>` / `EXT#<ext>` (the new one is `BOT#<bot>#EXT#<ext>` / `USER`). */
const isLegacyUser = (item: RawItem): boolean => item.entity === 'user' && typeof item.sk === 'string' && item.sk.startsWith(keys.legacyUserPrefix);

async function moveItem(item: RawItem, shards: number): Promise<boolean> {
  if (isLegacyUser(item)) {
    // A lost race: the session or erasure that won it changed the item; move whatever is there now.
    if (!(await moveLegacyUser(item))) await moveLegacyUserOf(item.bot_id as string, item.external_id as string);
    return true;
  }
  if (chatNeedsMove(item, shards)) {
    await moveChatListEntry(item, shards);
    return true;
  }
  return false;
}

/**
 * The worker's part: a Scan page (MIGRATE_PAGE_ITEMS items) at a time, its items moved, then the cursor saved,
 * so a run cut short goes on from the last page done; false when out of time or past MIGRATE_PAGES_PER_RUN pages. True once the table is scanned to its end, the marker
 * written and the task completed.
 */
export async function migrateData(task: TaskRecord, timeLeft: () => number): Promise<boolean> {
  const shards = config().chatListShards;
  let start = task.cursor ? (JSON.parse(task.cursor) as Record<string, unknown>) : undefined;
  const perRun = config().migratePagesPerRun;
  let [moved, pages] = [0, 0];
  do {
    if (timeLeft() <= TASK_TIME_MARGIN_MS || (perRun > 0 && pages++ >= perRun)) return false;
    const page = await scanPage(
      {
        Limit: config().migratePageItems,
        FilterExpression: 'entity IN (:user, :chat)',
        ExpressionAttributeValues: { ':user': 'user', ':chat': 'chat' },
      },
      start,
    );
    for (let i = 0; i < page.items.length; i += PARALLEL) {
      moved += (await Promise.all(page.items.slice(i, i + PARALLEL).map((item) => moveItem(item, shards)))).filter(Boolean).length;
    }
    start = page.next;
    // Another run of the same task finished it: this one stops.
    if (start && !(await saveTaskCursor(task.task_id, JSON.stringify(start)))) return true;
  } while (start);
  await writeLayout(shards);
  forgetLayout();
  await completeTask(task.task_id, {}, ['cursor']);
  log('info', 'data move done', { task_id: task.task_id, moved_in_last_run: moved });
  return true;
}
