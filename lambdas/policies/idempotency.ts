// Idempotency keys of sends (client_message_id / Idempotency-Key): a claim item per chat side and key, kept
// 24 h by TTL, holding the message it stands for, so that a retry finds the first send's message, or finishes
// a send that stopped between its claim and its put.
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, tableName, type RawItem } from '../aws/dynamo';
import { ConflictError } from '../shared/errors';
import { keys, type Key } from '../entities/keys';
import { messageFromItem, type MessageItem } from '../entities/messages';

const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export const idempotencyKey = (chatId: string, side: 'user' | 'bot', key: string): Key => keys.idempotency(chatId, side, key);

/**
 * Claims `key` for `item`. Undefined: claimed, go on and put the message. Otherwise the earlier send's result:
 * its message, or (when it stopped before its put) the claimed message, put now by `put`. A key already used
 * for a different message is a 409.
 */
export async function claimKey(
  key: Key,
  item: MessageItem,
  fingerprint: string,
  now: number,
  put: (m: MessageItem) => Promise<boolean>,
): Promise<{ item: MessageItem; created: boolean } | undefined> {
  let old: RawItem | undefined;
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...key, entity: 'idempotency', message_id: item.id, fingerprint, message: item, ttl: Math.floor(now / 1000) + IDEMPOTENCY_TTL_SECONDS },
        // A claim past its ttl has expired, whether or not DynamoDB's TTL (days late at times) has deleted it yet.
        ConditionExpression: 'attribute_not_exists(pk) OR #ttl <= :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':now': Math.floor(now / 1000) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return undefined;
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    old = conditionFailedItem(err);
  }
  // Our own claim, its reply lost and the put retried by the SDK.
  if (!old || old.message_id === item.id) return undefined;
  if (old.fingerprint !== fingerprint) throw new ConflictError('This idempotency key was already used for a different message in this chat');
  // The claim holds the message it stands for, as its item.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- the claim's copy is a raw message item: messageFromItem is its codec
  const claimed = messageFromItem(old.message);
  const found = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.message(claimed.user_id, claimed.chat_id, claimed.id), ConsistentRead: true }),
  );
  if (found.Item) return { item: messageFromItem(found.Item), created: false };
  // The first send is still writing, or stopped: its message either way (the first send answers 201).
  await put(claimed);
  return { item: claimed, created: false };
}

/** Gives a claim back (the send was refused after it, e.g. rate limited): a refused send leaves nothing. */
export async function releaseKey(key: Key, messageId: string): Promise<void> {
  try {
    await dynamo.send(
      new DeleteCommand({ TableName: tableName(), Key: key, ConditionExpression: 'message_id = :id', ExpressionAttributeValues: { ':id': messageId } }),
    );
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
  }
}
