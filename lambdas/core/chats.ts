// Chats: the owner's copy (list, counters) plus a pointer by chat id, created together in one transaction.
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { dynamo, tableName } from './aws';
import { ForbiddenError, NotFoundError } from './errors';
import { keys } from './keys';
import { newUuid } from './ids';

export interface Chat {
  id: string;
  name: string;
  additional_info: Record<string, unknown>;
  image_url: string | null;
  unread_msg_by_user: number;
  created_at: string;
  updated_at: string;
}

export interface NewChat {
  name: string;
  additional_info?: Record<string, unknown>;
  image_url?: string | null;
}

export function toChat(item: Record<string, unknown>): Chat {
  return {
    id: item.id as string,
    name: item.name as string,
    additional_info: (item.additional_info as Record<string, unknown>) ?? {},
    image_url: (item.image_url as string | null) ?? null,
    unread_msg_by_user: Number(item.unread_msg_by_user ?? 0),
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/** gsi1 sort key of a chat: a bot's chats by last activity. */
export const activityKey = (at: string, chatId: string): string => `${at}#${chatId}`;

export async function createChat(userId: string, botId: string, input: NewChat): Promise<Chat> {
  const now = new Date().toISOString();
  const id = newUuid();
  const chat: Chat = {
    id,
    name: input.name,
    additional_info: input.additional_info ?? {},
    image_url: input.image_url ?? null,
    unread_msg_by_user: 0,
    created_at: now,
    updated_at: now,
  };
  const table = tableName();
  const marker = { entity: 'chat_marker', chat_id: id, bot_id: botId };
  await dynamo().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: table,
            Item: {
              ...keys.chat(userId, id),
              entity: 'chat',
              ...chat,
              user_id: userId,
              bot_id: botId,
              unread_msg_by_operator: 0,
              last_read_at: null,
              gsi1pk: `BOT#${botId}`,
              gsi1sk: activityKey(now, id),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: table,
            Item: { ...keys.chatPointer(id), entity: 'chat_pointer', chat_id: id, user_id: userId, bot_id: botId },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        { Put: { TableName: table, Item: { ...keys.chatStart(userId, id), ...marker } } },
        { Put: { TableName: table, Item: { ...keys.chatEnd(userId, id), ...marker } } },
      ],
    }),
  );
  return chat;
}

/** Every chat of the user, newest activity first; strongly consistent, so a chat just made is listed. */
export async function listChats(userId: string): Promise<Chat[]> {
  const chats: Chat[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :chat)',
        ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':chat': keys.chatPrefix },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of out.Items ?? []) chats.push(toChat(item));
    start = out.LastEvaluatedKey;
  } while (start);
  return chats.sort((a, b) => b.updated_at.localeCompare(a.updated_at) || b.id.localeCompare(a.id));
}

/**
 * Called only after a write or read on the caller's partition found no chat: tells a foreign chat (403)
 * from an unknown one (404). Always throws.
 */
export async function rejectChatAccess(userId: string, chatId: string): Promise<never> {
  const out = await dynamo().send(
    new GetCommand({ TableName: tableName(), Key: keys.chatPointer(chatId), ProjectionExpression: 'user_id' }),
  );
  if (out.Item && out.Item.user_id !== userId) throw new ForbiddenError('This chat does not belong to the session user');
  throw new NotFoundError('Chat not found');
}

export async function markChatRead(userId: string, chatId: string): Promise<void> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.chat(userId, chatId),
        // last_event = read is what the stream filter passes to the publisher (a read action).
        UpdateExpression: 'SET unread_msg_by_user = :zero, last_read_at = :now, last_event = :read',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0, ':now': new Date().toISOString(), ':read': 'read' },
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) await rejectChatAccess(userId, chatId);
    throw err;
  }
}
