// The publisher's holds: a user's channel whose records wait in the publisher's redo queue, up to the last one
// set aside. While held, the channel's new records go to the queue behind them (aws/stream-batch.ts LaneHeld), so
// its publications and its chats' counters keep stream order; the redo releases the hold once it has run the
// last. The hold lives in the channel's subscriptions partition (keys.publisherHold), so the publisher's Query of
// the channel's sockets reads it with them (entities/connections.ts channelAudience): no read of its own.
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionMet, dynamo, tableName } from '../aws/dynamo';
import { keys } from './keys';

/** A hold outlives no redo: the redo queue keeps a message at most 14 days (then the hold is stale, and goes). */
const HOLD_TTL_SECONDS = 14 * 86400;

/** Sequence numbers compare as text once padded (they have up to 40 digits). */
const padded = (seq: string) => seq.padStart(40, '0');

/** Whether an item of a channel's subscriptions partition is its publisher hold. */
export const isPublisherHold = (channel: string, item: { sk?: unknown }): boolean => item.sk === keys.publisherHold(channel).sk;

/** Holds a channel up to `lastSeq`, the last of its records now set aside (a hold never moves back). */
export async function holdChannel(channel: string, lastSeq: string): Promise<void> {
  await conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.publisherHold(channel),
        UpdateExpression: 'SET entity = :entity, held_until = :seq, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(held_until) OR held_until < :seq',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':entity': 'stream_hold', ':seq': padded(lastSeq), ':ttl': Math.floor(Date.now() / 1000) + HOLD_TTL_SECONDS },
      }),
    ),
  );
}

/** Releases the hold if `seq` is still its last record: one set aside since keeps it. */
export async function releaseChannel(channel: string, seq: string): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.publisherHold(channel),
        ConditionExpression: 'held_until = :seq',
        ExpressionAttributeValues: { ':seq': padded(seq) },
      }),
    ),
  );
}
