// Typing indicators of the bot side: one small item per chat and sender, written at most once every
// TYPING_INTERVAL_MS; its stream record is what the publisher sends to the user's channel (so typing takes
// the same path, retries and ordering as messages). Calls in between are answered and cost one refused write.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionMet, dynamo, tableName } from '../aws/dynamo';
import type { ChatOwner } from '../entities/chats';
import { keys } from '../entities/keys';

/** At most one typing publication per chat and sender in this time; a client shows it for a few seconds. */
export const TYPING_INTERVAL_MS = 2000;
/** The item is gone (by TTL) well after any client stopped showing it. */
const TYPING_TTL_SECONDS = 60;

/** Records that the bot or an operator is typing; false when one was published less than the interval ago. */
export async function startTyping(owner: ChatOwner, chatId: string, sender: 'bot' | 'operator', nowMs = Date.now()): Promise<boolean> {
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.typing(owner.userId, chatId, sender),
        UpdateExpression: 'SET entity = :entity, chat_id = :chat, user_id = :user, bot_id = :bot, sender = :sender, at_ms = :now, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(at_ms) OR at_ms <= :cutoff',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':entity': 'typing',
          ':chat': chatId,
          ':user': owner.userId,
          ':bot': owner.botId,
          ':sender': sender,
          ':now': nowMs,
          ':cutoff': nowMs - TYPING_INTERVAL_MS,
          ':ttl': Math.floor(nowMs / 1000) + TYPING_TTL_SECONDS,
        },
      }),
    ),
  );
}
