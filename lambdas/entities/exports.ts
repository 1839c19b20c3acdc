// An export's item in its user's partition: it stands for the export's file in the bucket (when DynamoDB removes
// it by TTL, the webhook dispatcher deletes the object), and lets an erasure find the export's task.
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, optional, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { keys } from './keys';

/** The export item (`entity: export`). */
export interface ExportItem {
  task_id: string;
  /** Its file in the bucket, once written. */
  s3_key?: string;
  ttl: number;
}

/** The codec: an export item as DynamoDB (or its stream) gives it. */
export const exportFromItem = (raw: RawItem): ExportItem => {
  const item = raw as Stored<ExportItem>;
  return { task_id: item.task_id, ...optional(item, 's3_key'), ttl: item.ttl };
};

/** Puts the user's export item (written again, with its file, once the export is done). */
export async function putExportItem(userId: string, item: ExportItem): Promise<void> {
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.exportObject(userId, item.task_id), entity: 'export', ...item } }));
}

export async function deleteExportItem(userId: string, taskId: string): Promise<void> {
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.exportObject(userId, taskId) }));
}
