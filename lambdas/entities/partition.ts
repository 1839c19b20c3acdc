// Any item of a partition, as the erasure and the export walk it: its keys, its entity, and the ids that lead to
// other items (a chat's id, a file's, a task's, a message's files). The codec reads only those attributes; and
// the deletes of what such a walk found.
import { batchWrite, queryAll, type RawItem, type Stored } from '../aws/dynamo';
import type { Key } from './keys';

export interface PartitionItem {
  pk: string;
  sk: string;
  entity?: string;
  id?: string;
  chat_id?: string;
  file_id?: string;
  task_id?: string;
  /** The ids of the files a message attaches (none for other items). */
  file_ids: string[];
}

type StoredFields = Omit<PartitionItem, 'file_ids'> & { files?: { id?: string | null }[] | null };

/** The codec: an item of any entity, by its keys and what leads from it. */
export const partitionItemFromItem = (raw: RawItem): PartitionItem => {
  const item = raw as Stored<StoredFields>;
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  return {
    pk: item.pk,
    sk: item.sk,
    entity: text(item.entity),
    id: text(item.id),
    chat_id: text(item.chat_id),
    file_id: text(item.file_id),
    task_id: text(item.task_id),
    file_ids: (item.files ?? []).flatMap((f) => (f.id ? [f.id] : [])),
  };
};

/** Every item of a partition, strongly consistent (keys and what the walk follows from them). */
export async function partitionItems(pk: string): Promise<PartitionItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk, entity, id, chat_id, file_id, task_id, #files',
    ExpressionAttributeNames: { '#files': 'files' },
    ConsistentRead: true,
  });
  return items.map(partitionItemFromItem);
}

/** Deletes the items at these keys, of any entity (what is gone already stays gone): 25 per BatchWriteItem. */
export async function deleteItems(itemKeys: Key[]): Promise<void> {
  await batchWrite(itemKeys.map((Key) => ({ DeleteRequest: { Key } })));
}
