// Everything a user has, found from their partition and their prefix in the bucket: what an erasure deletes
// and an export writes out (flows/erase.ts, flows/export.ts).
import { queryAll } from '../aws/dynamo';
import { listKeys } from '../aws/s3';
import { keys } from '../entities/keys';
import { userKeyPrefix } from '../entities/files';
import { fileIdOfKey } from './uploads';

export interface UserData {
  /** Every item of the user's partition: keys, entity, and what leads to other items. */
  owned: Record<string, unknown>[];
  chatIds: Set<string>;
  /** Files sent in the user's chats by either side, attached or not, pending uploads included. */
  fileIds: Set<string>;
  /** Every object under the user's prefix (files, exports). */
  objects: string[];
}

/** Every item of a partition, strongly consistent (keys and what the walk follows from them). */
export const partitionItems = (pk: string): Promise<Record<string, unknown>[]> =>
  queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk, entity, id, chat_id, file_id, task_id, #files',
    ExpressionAttributeNames: { '#files': 'files' },
    ConsistentRead: true,
  });

export async function userData(botId: string, userId: string): Promise<UserData> {
  const [owned, objects] = await Promise.all([partitionItems(keys.userPartition(userId)), listKeys(userKeyPrefix(botId, userId))]);
  const chatIds = new Set<string>();
  const fileIds = new Set<string>();
  for (const item of owned) {
    if (item.entity === 'chat') chatIds.add(item.id as string);
    if (typeof item.chat_id === 'string') chatIds.add(item.chat_id);
    if (typeof item.file_id === 'string') fileIds.add(item.file_id);
    for (const f of (item.files as { id?: string | null }[] | null | undefined) ?? []) if (f.id) fileIds.add(f.id);
  }
  for (const key of objects) {
    const id = fileIdOfKey(key);
    if (id) fileIds.add(id);
  }
  return { owned, chatIds, fileIds, objects };
}
