// Everything a user has, found from their partition and their prefix in the bucket: what an erasure deletes
// and an export writes out (flows/erase.ts, flows/export.ts).
import { listKeys } from '../aws/s3';
import { keys } from '../entities/keys';
import { userKeyPrefix } from '../entities/files';
import { partitionItems, type PartitionItem } from '../entities/partition';
import { fileIdOfKey } from './uploads';

export interface UserData {
  /** Every item of the user's partition: keys, entity, and what leads to other items. */
  owned: PartitionItem[];
  chatIds: Set<string>;
  /** Files sent in the user's chats by either side, attached or not, pending uploads included. */
  fileIds: Set<string>;
  /** Every object under the user's prefix (files, exports). */
  objects: string[];
}

export async function userData(botId: string, userId: string): Promise<UserData> {
  const [owned, objects] = await Promise.all([partitionItems(keys.userPartition(userId)), listKeys(userKeyPrefix(botId, userId))]);
  const chatIds = new Set<string>();
  const fileIds = new Set<string>();
  for (const item of owned) {
    if (item.entity === 'chat' && item.id) chatIds.add(item.id);
    if (item.chat_id) chatIds.add(item.chat_id);
    if (item.file_id) fileIds.add(item.file_id);
    for (const id of item.file_ids) fileIds.add(id);
  }
  for (const key of objects) {
    const id = fileIdOfKey(key);
    if (id) fileIds.add(id);
  }
  return { owned, chatIds, fileIds, objects };
}
