// A user's storage quota for client uploads: at most MAX_OPEN_UPLOAD_BYTES of pending or unsent files at a time
// (413) and MAX_UPLOAD_BYTES_PER_DAY per UTC day (429 until the day rolls). One item per user holds both
// counters, so an upload takes its bytes with one UpdateItem (beside its rate counter's, in parallel). The
// bytes go back when the file is first sent (the stream, files-sent.ts), rejected (the completer), or removed
// unsent (the stream's REMOVE), each exactly once.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { transactWrite, type TransactItem } from '../aws/transact';
import { config } from '../shared/config';
import { RateLimitedError, TooLargeError, UnavailableError } from '../shared/errors';
import { keys } from '../entities/keys';
import type { FileRecord } from '../entities/files';
import { consumeRateAnd } from './rate';

const DAY_SECONDS = 86400;
/** A released file's marker outlives every redelivery of its REMOVE (a stream keeps records 24 h). */
const RELEASE_MARKER_SECONDS = 2 * DAY_SECONDS;

/** Whether uploads count at all (either quota on). */
export const quotaOn = (): boolean => config().limits.openUploadBytes > 0 || config().limits.uploadBytesPerDay > 0;

/** What a take moved, to give back if the request is refused after it. */
export interface Taken {
  userId: string;
  bytes: number;
  day: number;
}

/** The user's quota item (`entity: upload_quota`): its bytes at a time, and its bytes of `day` (days since the epoch, UTC). */
interface QuotaItem {
  open_bytes: number;
  day?: number;
  day_bytes: number;
}

/** The codec: the quota item as a refused write returns it (counters absent read as 0). */
const quotaFromItem = (raw: RawItem): QuotaItem => {
  const item = raw as Stored<Partial<QuotaItem>>;
  return { open_bytes: Number(item.open_bytes ?? 0), ...(typeof item.day === 'number' && { day: item.day }), day_bytes: Number(item.day_bytes ?? 0) };
};

const mb = (n: number) => `${Math.floor(n / 1024 ** 2)} MB`;

/**
 * Takes `bytes` of the user's quotas, or refuses: 413 over the bytes at a time, 429 with Retry-After (until
 * 00:00 UTC) over today's. Normally one UpdateItem; the first upload of a UTC day starts the day's counter
 * with a second. Undefined when both quotas are off (nothing counted).
 */
export async function takeStorage(userId: string, bytes: number, nowMs = Date.now()): Promise<Taken | undefined> {
  if (!quotaOn()) return undefined;
  const { openUploadBytes: open, uploadBytesPerDay: perDay } = config().limits;
  let day = Math.floor(nowMs / 1000 / DAY_SECONDS);
  const openCheck = open > 0 ? '(attribute_not_exists(open_bytes) OR open_bytes <= :openLeft)' : undefined;
  // Today's counter moves on; a new day (or a first upload) starts it at these bytes. Without a daily quota
  // only the bytes at a time count.
  let sameDay = true;
  for (let tries = 0; tries < 4; tries++) {
    const dayCheck = perDay <= 0 ? undefined : sameDay ? '#day = :day AND day_bytes <= :dayLeft' : '(attribute_not_exists(#day) OR #day < :day)';
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.uploadQuota(userId),
          UpdateExpression:
            perDay <= 0 ? 'SET entity = :e ADD open_bytes :b' : sameDay ? 'SET entity = :e ADD open_bytes :b, day_bytes :b' : 'SET entity = :e, #day = :day, day_bytes = :b ADD open_bytes :b',
          ConditionExpression: [dayCheck, openCheck].filter(Boolean).join(' AND ') || undefined,
          ExpressionAttributeNames: dayCheck ? { '#day': 'day' } : undefined,
          ExpressionAttributeValues: {
            ':e': 'upload_quota',
            ':b': bytes,
            ...(open > 0 && { ':openLeft': open - bytes }),
            ...(dayCheck && { ':day': day }),
            ...(dayCheck && sameDay && { ':dayLeft': perDay - bytes }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { userId, bytes, day };
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      const old = quotaFromItem(conditionFailedItem(err) ?? {});
      if (open > 0 && old.open_bytes > open - bytes) {
        throw new TooLargeError(`Too much stored: at most ${open} bytes (${mb(open)}) of uploads not yet sent at a time; send them, or wait for unsent ones to expire`);
      }
      const stored = old.day;
      if (perDay > 0 && stored !== undefined && stored >= day && old.day_bytes > perDay - bytes) {
        const retryAfter = (stored + 1) * DAY_SECONDS - nowMs / 1000;
        throw new RateLimitedError(`Too many uploads today: at most ${perDay} bytes (${mb(perDay)}) a UTC day; retry in ${Math.ceil(retryAfter)} s`, retryAfter);
      }
      // The day has moved (or moved meanwhile, maybe by a writer whose clock is a moment ahead): go on with it.
      if (stored !== undefined && stored > day) day = stored;
      sameDay = stored === day;
    }
  }
  // Uploads of one user racing each other for longer than that: a retry, not a server error.
  throw new UnavailableError(`The upload quota of this user kept changing; please retry`);
}

/** Gives back what a refused request took: its bytes at a time, and today's when the day has not rolled. */
export async function giveBackStorage(taken: Taken | undefined): Promise<void> {
  if (!taken) return;
  const key = keys.uploadQuota(taken.userId);
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'ADD open_bytes :minus, day_bytes :minus',
        ConditionExpression: '#day = :day',
        ExpressionAttributeNames: { '#day': 'day' },
        ExpressionAttributeValues: { ':minus': -taken.bytes, ':day': taken.day },
      }),
    );
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: key, UpdateExpression: 'ADD open_bytes :minus', ExpressionAttributeValues: { ':minus': -taken.bytes } }));
  }
}

/** The quota's part of a transaction that frees a file's bytes (only while the user's quota item exists: an erased user's is gone). */
export const releaseItem = (userId: string, bytes: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: keys.uploadQuota(userId),
    UpdateExpression: 'ADD open_bytes :minus',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':minus': -bytes },
  },
});

/**
 * A counted file removed before it was sent (expired pending or unsent, erased): its bytes go back once,
 * with a marker that a redelivered REMOVE finds. A rejected or sent file gave them back already.
 */
export async function releaseRemovedFile(old: FileRecord): Promise<void> {
  if (!old.counted || old.sent_at || old.status === 'rejected') return;
  const marker = { ...keys.quotaRelease(old.id), entity: 'quota_release', ttl: Math.floor(Date.now() / 1000) + RELEASE_MARKER_SECONDS };
  await transactWrite([
    { Put: { TableName: tableName(), Item: marker, ConditionExpression: 'attribute_not_exists(pk)' } },
    releaseItem(old.user_id, Number(old.size)),
  ]);
}

/**
 * A client upload's allowance: the uploads rate and `bytes` of the storage quota, taken side by side; then
 * `write` (told whether the bytes were counted). A refusal, or a failed write, gives back what was taken.
 */
export async function withUploadAllowance<T>(userId: string, bytes: number, write: (counted: boolean) => Promise<T>): Promise<T> {
  const rate = { name: 'uploads' as const, subject: userId, perMinute: config().limits.uploadsPerMinute };
  const taken = await consumeRateAnd(rate, () => takeStorage(userId, bytes), giveBackStorage);
  try {
    return await write(Boolean(taken));
  } catch (err) {
    // The request fails with the write's error either way; a give-back that fails too leaves the bytes counted
    // until the file's pending record would have expired.
    await giveBackStorage(taken).catch(() => undefined);
    throw err;
  }
}
