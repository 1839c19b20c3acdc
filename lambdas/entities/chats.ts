// Chats: the owner's copy (list, counters) plus a pointer by chat id, and the Bot API's page of a bot's chats by activity.
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../aws/dynamo';
import { ForbiddenError, NotFoundError } from '../shared/errors';
import { TtlCache } from '../shared/cache';
import { keys } from './keys';

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

/**
 * additional_info is stored as its JSON text: a DynamoDB map refuses part of what JSON allows (numbers beyond
 * 38 digits or 1e±126-130, empty keys, nesting over 32). Chats written before are maps, read as they are.
 */
export const storedInfo = (info: Record<string, unknown>): string => JSON.stringify(info);
const readInfo = (stored: unknown): Record<string, unknown> =>
  typeof stored === 'string' ? (JSON.parse(stored) as Record<string, unknown>) : ((stored as Record<string, unknown>) ?? {});

export function toChat(item: Record<string, unknown>): Chat {
  return {
    id: item.id as string,
    name: item.name as string,
    additional_info: readInfo(item.additional_info),
    image_url: (item.image_url as string | null) ?? null,
    unread_msg_by_user: Number(item.unread_msg_by_user ?? 0),
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/** Whose chat: the user, their bot, and their external id (the bot side and webhooks show it). */
export interface ChatOwner {
  userId: string;
  botId: string;
  externalId?: string;
}

/**
 * Called only after a write or read on the caller's partition found no chat: tells a foreign chat (403)
 * from an unknown one (404). Always throws.
 */
export async function rejectChatAccess(userId: string, chatId: string): Promise<never> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.chatPointer(chatId), ProjectionExpression: 'user_id' }),
  );
  if (out.Item && out.Item.user_id !== userId) throw new ForbiddenError('This chat does not belong to the session user');
  throw new NotFoundError('Chat not found');
}

// Who owns a chat never changes, so the Bot API keeps pointers in memory (bounded) after one read.
const pointerCache = new TtlCache<Record<string, unknown> | undefined>(() => 10 * 60_000, 10_000);

/** A chat of this bot, for the Bot API: anything else (unknown, another bot's) is a 404. */
export async function resolveBotChat(botId: string, chatId: string): Promise<ChatOwner> {
  const pointer = await pointerCache.get(chatId, async () => {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chatPointer(chatId) }));
    return out.Item;
  });
  if (!pointer || pointer.bot_id !== botId) throw new NotFoundError('Chat not found');
  return { userId: pointer.user_id as string, botId, externalId: pointer.external_id as string | undefined };
}

export interface BotChat extends Chat {
  /** User messages the operator has not read yet. */
  unread_count: number;
  user: { id: string; external_id: string | null; first_name: string; last_name: string };
}

export interface BotChatPage {
  chats: BotChat[];
  next_cursor: string | null;
}

/** One page of the bot's chats from gsi1 (by last activity): the Bot API's list, a retention task's walk. */
export function botChatsPage(botId: string, page: { limit: number; newestFirst: boolean; start?: Record<string, unknown>; projection?: string }) {
  return dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :bot',
      ExpressionAttributeValues: { ':bot': keys.botChats(botId) },
      ScanIndexForward: !page.newestFirst,
      Limit: page.limit,
      ExclusiveStartKey: page.start,
      ProjectionExpression: page.projection,
    }),
  );
}

