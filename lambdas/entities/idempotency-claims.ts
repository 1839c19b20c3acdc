// Idempotency claims (policies/idempotency.ts): an item per chat side and key, holding the message it stands for.
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, tableName, type RawItem, type Stored } from '../aws/dynamo';
import type { Key } from './keys';
import { messageFromItem, type MessageItem } from './messages';

/** The claim item (`entity: idempotency`). */
export interface ClaimItem {
  message_id: string;
  /** What the send asked for: a retry with the same key must ask for the same. */
  fingerprint: string;
  /** The message the claim stands for, as its item. */
  message: MessageItem;
  /** When it expires (epoch seconds). */
  ttl: number;
}

/** The codec: a claim item as DynamoDB returns it, its message read by the message codec. */
export const claimFromItem = (raw: RawItem): ClaimItem => {
  const item = raw as Stored<Omit<ClaimItem, 'message'> & { message: RawItem }>;
  return { message_id: item.message_id, fingerprint: item.fingerprint, message: messageFromItem(item.message), ttl: item.ttl };
};

/**
 * Puts the claim under `key` unless a live one is there (a claim past its ttl has expired, whether or not
 * DynamoDB's TTL, days late at times, has deleted it yet). Undefined: claimed; otherwise the claim that holds it.
 */
export async function putClaim(key: Key, claim: ClaimItem, nowSeconds: number): Promise<ClaimItem | undefined> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...key, entity: 'idempotency', ...claim },
        ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': nowSeconds },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return undefined;
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    const old = conditionFailedItem(err);
    return old && claimFromItem(old);
  }
}

/** Deletes the claim if it is still this message's. */
export async function deleteClaim(key: Key, messageId: string): Promise<void> {
  try {
    await dynamo.send(
      new DeleteCommand({ TableName: tableName(), Key: key, ConditionExpression: 'message_id = :id', ExpressionAttributeValues: { ':id': messageId } }),
    );
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
  }
}
