// A chat's activity and unread counters, moved from the stream after each send (realtime/publish.ts calls
// countMessage before it publishes the message): a send writes no transaction (docs/architecture.md).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import { keys } from './keys';

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
 * redelivery. A message older than the reader's last read (a read that raced it) moves the activity only.
 */
export async function countMessage(m: CountedMessage, sequence: string): Promise<void> {
  const incoming = m.sender_type === 'incoming';
  const seq = sequence.padStart(40, '0'); // compared as text: sequence numbers have up to 40 digits
  const update = (count: boolean) =>
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.chat(m.user_id, m.chat_id),
        UpdateExpression: `SET updated_at = :at, gsi1sk = :act, last_event = :message, counted_seq = :seq${count ? ' ADD #unread :one' : ''}`,
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(counted_seq) OR counted_seq < :seq)' +
          (count ? ' AND (attribute_not_exists(#read) OR NOT attribute_type(#read, :string) OR #read < :at)' : ''),
        ExpressionAttributeNames: count
          ? { '#unread': incoming ? 'unread_msg_by_operator' : 'unread_msg_by_user', '#read': incoming ? 'operator_last_read_at' : 'last_read_at' }
          : undefined,
        ExpressionAttributeValues: {
          ':at': m.created_at,
          ':act': keys.chatActivity(m.bot_id, m.created_at, m.chat_id).gsi1sk,
          ':message': 'message',
          ':seq': seq,
          ...(count && { ':one': 1, ':string': 'S' }),
        },
      }),
    );
  try {
    await update(true);
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    // Read before this message was sent, or already counted (or the chat is gone): at most the activity moves.
    try {
      await update(false);
    } catch (again) {
      if (!isConditionFailed(again)) throw again;
    }
  }
}
