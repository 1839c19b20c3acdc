// A stream consumer's holds: a lane (a user) whose records wait in the consumer's redo queue, up to the last one
// set aside. While held, the lane's new records go to the queue behind them (aws/stream-batch.ts), so its
// publications and its chats' counters keep stream order; the redo releases the hold once it has run the last.
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, conditionMet, dynamo, tableName } from '../aws/dynamo';
import { keys } from './keys';

/** A hold outlives no redo: the redo queue keeps a message at most 14 days (then the hold is stale, and goes). */
const HOLD_TTL_SECONDS = 14 * 86400;

/** Sequence numbers compare as text once padded (they have up to 40 digits). */
const padded = (seq: string) => seq.padStart(40, '0');

/** The lanes among `lanes` held by `consumer`: a consistent read, so a hold set by the batch before is seen. */
export async function heldLanes(consumer: string, lanes: string[]): Promise<Set<string>> {
  if (!lanes.length) return new Set();
  const items = await batchGet(lanes.map((lane) => keys.streamHold(consumer, lane)), true);
  return new Set(items.map((i) => String(i.lane)));
}

/** Holds a lane up to `lastSeq`, the last of its records now set aside (a hold never moves back). */
export async function holdLane(consumer: string, lane: string, lastSeq: string): Promise<void> {
  await conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.streamHold(consumer, lane),
        UpdateExpression: 'SET entity = :entity, lane = :lane, held_until = :seq, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(held_until) OR held_until < :seq',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':entity': 'stream_hold', ':lane': lane, ':seq': padded(lastSeq), ':ttl': Math.floor(Date.now() / 1000) + HOLD_TTL_SECONDS },
      }),
    ),
  );
}

/** Releases the hold if `seq` is still its last record: one set aside since keeps it. */
export async function releaseLane(consumer: string, lane: string, seq: string): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.streamHold(consumer, lane),
        ConditionExpression: 'held_until = :seq',
        ExpressionAttributeValues: { ':seq': padded(seq) },
      }),
    ),
  );
}
