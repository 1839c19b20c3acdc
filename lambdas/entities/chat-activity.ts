// A chat's activity and unread counters, moved from the stream after each send (realtime/publish.ts calls
// countMessage before it publishes the message): a send writes no transaction (docs/architecture.md). And a
// side's read, which resets its counter without losing a message the stream counted meanwhile.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import { config } from '../shared/config';
import { keys } from './keys';

/**
 * Each side of a chat: its counter of the other side's messages, its last read, the sender_type it counts,
 * and the last_event its read writes.
 */
export const SIDES = {
  user: { count: 'unread_msg_by_user', read: 'last_read_at', counts: 'outcoming', event: 'read' },
  // Never "read": the stream filter passes only the user's read to the publisher (a read action).
  operator: { count: 'unread_msg_by_operator', read: 'operator_last_read_at', counts: 'incoming', event: 'operator_read' },
} as const;

/** A message as the stream gives it to countMessage. */
export interface CountedMessage {
  user_id: string;
  bot_id: string;
  chat_id: string;
  created_at: string;
  sender_type: 'incoming' | 'outcoming';
}

/**
 * The stream's part of a send (realtime/publish.ts, before the publication): the chat's activity moves and the
 * other side's unread counter counts the message, exactly once. `sequence` is the stream record's sequence
 * number: records of one chat come in order, so a record at or below the chat's last counted one is a
 * redelivery. A message older than the reader's last read (a read that raced it) is not counted, and one older
 * than the chat's activity (two sends whose puts landed in the other order than their times) does not move it
 * back: each write holds only while what it decided on still does, and a refused one decides again from the
 * item it returns (at most three writes: each refusal turns one part off for good).
 */
export async function countMessage(m: CountedMessage, sequence: string): Promise<void> {
  const reader = m.sender_type === 'incoming' ? SIDES.operator : SIDES.user;
  const seq = sequence.padStart(40, '0'); // compared as text: sequence numbers have up to 40 digits
  let [count, move] = [true, true];
  for (let tries = 1; ; tries++) {
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.chat(m.user_id, m.chat_id),
          // Moved, the chat is listed in its shard of the current count (a chat still in the legacy list, or in a
          // shard of another count, moves there with it).
          UpdateExpression: `SET ${move ? 'updated_at = :at, gsi2pk = :list, gsi2sk = :act, ' : ''}last_event = :message, counted_seq = :seq${count ? ' ADD #unread :one' : ''}${move ? ' REMOVE gsi1pk, gsi1sk' : ''}`,
          ConditionExpression:
            'attribute_exists(pk) AND (attribute_not_exists(counted_seq) OR counted_seq < :seq)' +
            (count ? ' AND (attribute_not_exists(#read) OR NOT attribute_type(#read, :string) OR #read < :at)' : '') +
            (move ? ' AND (attribute_not_exists(updated_at) OR NOT attribute_type(updated_at, :string) OR updated_at <= :at)' : ''),
          ExpressionAttributeNames: count ? { '#unread': reader.count, '#read': reader.read } : undefined,
          ExpressionAttributeValues: {
            ':message': 'message',
            ':seq': seq,
            ...((count || move) && { ':at': m.created_at, ':string': 'S' }),
            ...(move && activityValues(keys.chatActivity(m.bot_id, m.created_at, m.chat_id, config().chatListShards))),
            ...(count && { ':one': 1 }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return;
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      const chat = conditionFailedItem(err);
      // The chat is gone, or this record was counted already.
      if (!chat || (typeof chat.counted_seq === 'string' && chat.counted_seq >= seq)) return;
      const read: unknown = chat[reader.read];
      count &&= !(typeof read === 'string' && read >= m.created_at);
      move &&= !(typeof chat.updated_at === 'string' && chat.updated_at > m.created_at);
      // Each refusal turns a part off, so a third one cannot happen; if it did, the stream retries the record.
      if (tries === 3) throw new Error(`countMessage: chat ${m.chat_id} refused three writes of record ${sequence}`, { cause: err });
    }
  }
}

const activityValues = ({ gsi2pk, gsi2sk }: { gsi2pk: string; gsi2sk: string }) => ({ ':list': gsi2pk, ':act': gsi2sk });

/** Tries of a read before it is written without its guard (each one beaten by a message counted meanwhile). */
const READ_TRIES = 5;

/**
 * A side's read: its counter to 0 and its last read to `nowMs`. `seen` is the chat's last counted record
 * (counted_seq) as the caller read it before taking the time. The write holds only if nothing was counted
 * since: else a message counted in between, possibly created after `nowMs`, would be reset with the ones
 * read and never counted again. Beaten so, the read is taken again as of a later time, after that message
 * (the item the refused write returns says what was counted): the counter is then exactly the messages after
 * the last read it stores, as it is when unbeaten. False when the chat is gone.
 */
export async function resetUnread(userId: string, chatId: string, side: keyof typeof SIDES, seen: unknown, nowMs = Date.now()): Promise<boolean> {
  const r = SIDES[side];
  let [counted, at] = [seen, nowMs];
  for (let tries = 1; ; tries++) {
    const guard = tries < READ_TRIES ? (counted === undefined ? ' AND attribute_not_exists(counted_seq)' : ' AND counted_seq = :seen') : '';
    try {
      await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.chat(userId, chatId),
          UpdateExpression: 'SET #count = :zero, #read = :now, last_event = :event',
          ConditionExpression: `attribute_exists(pk)${guard}`,
          ExpressionAttributeNames: { '#count': r.count, '#read': r.read },
          ExpressionAttributeValues: { ':zero': 0, ':now': new Date(at).toISOString(), ':event': r.event, ...(guard.includes(':seen') && { ':seen': counted }) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return true;
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
      const item = conditionFailedItem(err);
      if (!item) return false;
      // After the newest message counted (its activity), whatever this instance's clock says.
      const seen: unknown = item.counted_seq;
      [counted, at] = [seen, Math.max(Date.now(), typeof item.updated_at === 'string' ? Date.parse(item.updated_at) + 1 : 0)];
    }
  }
}
