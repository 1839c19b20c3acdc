// Typing indicators: one small item per chat and sender, its stream record what the publisher sends (flows/typing.ts
// decides how often it is written).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionMet, dynamo, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { keys } from './keys';

/** The typing item (`entity: typing`). */
export interface TypingItem {
  chat_id: string;
  user_id: string;
  bot_id: string;
  sender: 'bot' | 'operator';
  /** When it was last written (epoch ms). */
  at_ms: number;
  ttl: number;
}

/** The codec: a typing item as its stream record gives it. */
export const typingFromItem = (raw: RawItem): TypingItem => {
  const item = raw as Stored<TypingItem>;
  return { chat_id: item.chat_id, user_id: item.user_id, bot_id: item.bot_id, sender: item.sender, at_ms: item.at_ms, ttl: item.ttl };
};

/** Writes the typing item unless it was written after `cutoffMs`: false then (one refused write). */
export function markTyping(item: TypingItem, cutoffMs: number): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.typing(item.user_id, item.chat_id, item.sender),
        UpdateExpression: 'SET entity = :entity, chat_id = :chat, user_id = :user, bot_id = :bot, sender = :sender, at_ms = :now, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(at_ms) OR at_ms <= :cutoff',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':entity': 'typing',
          ':chat': item.chat_id,
          ':user': item.user_id,
          ':bot': item.bot_id,
          ':sender': item.sender,
          ':now': item.at_ms,
          ':cutoff': cutoffMs,
          ':ttl': item.ttl,
        },
      }),
    ),
  );
}
