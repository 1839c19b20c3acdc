// A file record's writes after it is made: a direct upload's pending record (with its user's reference), its
// settling by the checks (flows/uploads.ts), and its marking as sent when a message attaches it (flows/files-sent.ts).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, conditionMet, dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import type { TransactItem } from '../aws/transact';
import { fileFromItem, fileItem, type FileRecord } from './files';
import { keys } from './keys';

/** An UpdateItem of a file record, to send alone or in a transaction. */
export type FileUpdate = NonNullable<TransactItem['Update']>;

/**
 * A pending direct upload's record, with the user's reference to it (an erasure finds a pending upload even
 * before, or without, its object), in one BatchWriteItem; the reference lasts until `refTtl`.
 */
export async function putPendingUpload(record: FileRecord, refTtl: number): Promise<void> {
  await batchWrite([
    { PutRequest: { Item: fileItem(record) } },
    { PutRequest: { Item: { ...keys.uploadRef(record.user_id, record.id), entity: 'upload_ref', file_id: record.id, ttl: refTtl } } },
  ]);
}

/** Where the checks settle an upload: uploaded (serving its sealed copy) or rejected (and why). */
export type Settled = { status: 'uploaded'; s3Key: string } | { status: 'rejected'; reason: string };

/**
 * The update that settles `record` (only from the status it has): `ttl` its new expiry (undefined: none), or
 * with `keep` its expiry left as it is.
 */
export function settleUpdate(record: FileRecord, to: Settled, ttl: number | undefined, keep: boolean): FileUpdate {
  return {
    TableName: tableName(),
    Key: keys.file(record.id),
    UpdateExpression:
      to.status === 'rejected'
        ? 'SET #status = :status, reason = :reason, #ttl = :ttl'
        : keep
          ? 'SET #status = :status, s3_key = :key'
          : ttl !== undefined
            ? 'SET #status = :status, s3_key = :key, #ttl = :ttl'
            : 'SET #status = :status, s3_key = :key REMOVE #ttl',
    ConditionExpression: '#status = :from',
    ExpressionAttributeNames: { '#status': 'status', ...(!keep && { '#ttl': 'ttl' }) },
    ExpressionAttributeValues: {
      ':status': to.status,
      ':from': record.status,
      ...(to.status === 'rejected' ? { ':reason': to.reason } : { ':key': to.s3Key }),
      ...(ttl !== undefined && { ':ttl': ttl }),
    },
  };
}

/** Writes a file's update alone: the record as written, or undefined when its condition refused it. */
export async function updateFile(update: FileUpdate): Promise<FileRecord | undefined> {
  try {
    return fileFromItem((await dynamo.send(new UpdateCommand({ ...update, ReturnValues: 'ALL_NEW' }))).Attributes ?? {});
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    return undefined;
  }
}

/**
 * The update that marks a file sent at `sentAt` and dates it `ttl` (undefined: kept for ever): `first`, only if
 * it was never sent; otherwise only by a message later than the last one.
 */
export function sentUpdate(fileId: string, sentAt: string, ttl: number | undefined, first: boolean): FileUpdate {
  return {
    TableName: tableName(),
    Key: keys.file(fileId),
    UpdateExpression: ttl !== undefined ? 'SET sent_at = :at, #ttl = :ttl' : 'SET sent_at = :at REMOVE #ttl',
    ConditionExpression: first ? 'attribute_exists(pk) AND attribute_not_exists(sent_at)' : 'attribute_exists(pk) AND (attribute_not_exists(sent_at) OR sent_at < :at)',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':at': sentAt, ...(ttl !== undefined && { ':ttl': ttl }) },
  };
}

/** Marks a file sent (sentUpdate, not first): false when it is gone, or kept already for this message or a later one. */
export function markSent(fileId: string, sentAt: string, ttl: number | undefined): Promise<boolean> {
  return conditionMet(dynamo.send(new UpdateCommand(sentUpdate(fileId, sentAt, ttl, false))));
}
