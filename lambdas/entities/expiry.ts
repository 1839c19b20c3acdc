// An item's `ttl` (epoch seconds) as every read treats it: DynamoDB deletes an item past it within days, and
// until then a read takes it as gone; and the write that re-dates one.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionMet, dynamo, tableName } from '../aws/dynamo';
import type { Key } from './keys';

export const isPastTtl = (item: { ttl?: unknown }, nowMs = Date.now()): boolean => typeof item.ttl === 'number' && item.ttl * 1000 <= nowMs;

/**
 * Sets (or, for no ttl, removes) an item's expiry, if the item is still there (and, given a status, in that
 * status): false when it was deleted or settled meanwhile (nothing to re-date).
 */
export function redate(key: Key, ttl: number | undefined, status?: string): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: ttl === undefined ? 'REMOVE #a' : 'SET #a = :ttl',
        ConditionExpression: 'attribute_exists(pk)' + (status ? ' AND #status = :status' : ''),
        ExpressionAttributeNames: { '#a': 'ttl', ...(status && { '#status': 'status' }) },
        ExpressionAttributeValues: ttl === undefined && !status ? undefined : { ...(ttl !== undefined && { ':ttl': ttl }), ...(status && { ':status': status }) },
      }),
    ),
  );
}
