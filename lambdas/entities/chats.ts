// Chats: the owner's copy (list, counters) plus a pointer by chat id (a bot's chats by activity: chat-list.ts).
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, optional, queryAll, tableName, type RawItem, type Stored } from '../aws/dynamo';
import type { TransactItem } from '../aws/transact';
import { ForbiddenError, NotFoundError } from '../shared/errors';
import { TtlCache } from '../shared/cache';
import { config } from '../shared/config';
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

/** The owner's copy of a chat (`entity: chat`), as stored. */
export interface ChatItem {
  id: string;
  user_id: string;
  bot_id: string;
  external_id?: string;
  name: string;
  /** As the chat's JSON text stores it (a DynamoDB map on older chats), parsed: a client's JSON object. */
  additional_info: Record<string, unknown>;
  image_url: string | null;
  /** Each side's counter of the other side's messages after its last read (chat-activity.ts SIDES). */
  unread_msg_by_user: number;
  unread_msg_by_operator: number;
  last_read_at: string | null;
  operator_last_read_at?: string;
  /** The last stream record counted into the chat (chat-activity.ts). */
  counted_seq?: string;
  /** What last changed it: a message counted, or a side's read (the user's read is published). */
  last_event?: 'message' | 'read' | 'operator_read';
  created_at: string;
  updated_at: string;
}

/**
 * additional_info is stored as its JSON text: a DynamoDB map refuses part of what JSON allows (numbers beyond
 * 38 digits or 1e±126-130, empty keys, nesting over 32). Chats written before are maps, read as they are.
 */
const storedInfo = (info: Record<string, unknown>): string => JSON.stringify(info);
const readInfo = (stored: unknown): Record<string, unknown> => {
  // A JSON value a client gave (an object, as the APIs accept it), not an item: it is read as JSON is, unknown inside.
  const info: unknown = typeof stored === 'string' ? JSON.parse(stored) : stored;
  return isJsonObject(info) ? info : {};
};
const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The codec: a chat item as DynamoDB returns it (counters absent on older items read as 0). */
export const chatFromItem = (raw: RawItem): ChatItem => {
  const item = raw as Stored<ChatItem>;
  return {
    id: item.id,
    user_id: item.user_id,
    bot_id: item.bot_id,
    ...(typeof item.external_id === 'string' && { external_id: item.external_id }),
    name: item.name,
    additional_info: readInfo(item.additional_info),
    image_url: item.image_url ?? null,
    unread_msg_by_user: Number(item.unread_msg_by_user ?? 0),
    unread_msg_by_operator: Number(item.unread_msg_by_operator ?? 0),
    last_read_at: item.last_read_at ?? null,
    ...(typeof item.operator_last_read_at === 'string' && { operator_last_read_at: item.operator_last_read_at }),
    ...optional(item, 'counted_seq', 'last_event'),
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
};

/** The chat as the APIs show it. */
export const toChat = (c: ChatItem): Chat => ({
  id: c.id,
  name: c.name,
  additional_info: c.additional_info,
  image_url: c.image_url,
  unread_msg_by_user: c.unread_msg_by_user,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

/** Whose chat: the user, their bot, and their external id (the bot side and webhooks show it). */
export interface ChatOwner {
  userId: string;
  botId: string;
  externalId?: string;
}

/**
 * A new chat's writes, each only if its key is free: the owner's copy (with its gsi2 activity key), the pointer
 * by chat id, and the markers around its messages (flows/chats.ts adds the guards to the same transaction).
 */
export function newChatWrites({ userId, botId, externalId }: ChatOwner, chat: Chat): TransactItem[] {
  const table = tableName();
  const marker = { entity: 'chat_marker', chat_id: chat.id, bot_id: botId };
  return [
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.chat(userId, chat.id),
          entity: 'chat',
          ...chat,
          additional_info: storedInfo(chat.additional_info),
          user_id: userId,
          bot_id: botId,
          external_id: externalId,
          unread_msg_by_operator: 0,
          last_read_at: null,
          ...keys.chatActivity(botId, chat.created_at, chat.id, config().chatListShards),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.chatPointer(chat.id), entity: 'chat_pointer', chat_id: chat.id, user_id: userId, bot_id: botId, external_id: externalId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: table, Item: { ...keys.chatStart(userId, chat.id), ...marker } } },
    { Put: { TableName: table, Item: { ...keys.chatEnd(userId, chat.id), ...marker } } },
  ];
}

/** The user's chat count, one more, only below `max`: a new chat's guard, in its transaction. */
export const chatCountWrite = (userId: string, max: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: keys.userStats(userId),
    UpdateExpression: 'SET entity = :entity ADD chats :one',
    ConditionExpression: 'attribute_not_exists(chats) OR chats < :max',
    ExpressionAttributeValues: { ':entity': 'user_stats', ':one': 1, ':max': max },
  },
});

/** Every chat of the user, strongly consistent (a chat just made is there). */
export async function userChats(userId: string): Promise<ChatItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :chat)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':chat': keys.chatPrefix },
    ConsistentRead: true,
  });
  return items.map(chatFromItem);
}

/** The user's chat, strongly consistent; undefined when there is none. */
export async function readChat(userId: string, chatId: string): Promise<ChatItem | undefined> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ConsistentRead: true }));
  return out.Item && chatFromItem(out.Item);
}

/** Whether the chat is there, and its last counted record (a side's read is written against it), strongly consistent. */
export async function chatCountedSeq(userId: string, chatId: string): Promise<{ counted_seq?: string } | undefined> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ProjectionExpression: 'counted_seq', ConsistentRead: true }));
  const seq: unknown = out.Item?.counted_seq;
  return out.Item && { ...(typeof seq === 'string' && { counted_seq: seq }) };
}

/** Whether the user's chat is there (its key only), strongly consistent. */
export async function chatExists(userId: string, chatId: string): Promise<boolean> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ProjectionExpression: 'pk', ConsistentRead: true }));
  return Boolean(out.Item);
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

/** The pointer by chat id (`entity: chat_pointer`): whose chat it is. */
interface ChatPointer {
  user_id: string;
  bot_id: string;
  external_id?: string;
}

const pointerFromItem = (raw: RawItem): ChatPointer => {
  const item = raw as Stored<ChatPointer>;
  return {
    user_id: item.user_id,
    bot_id: item.bot_id,
    ...(typeof item.external_id === 'string' && { external_id: item.external_id }),
  };
};

// Who owns a chat never changes, so the Bot API keeps pointers in memory (bounded) after one read.
const pointerCache = new TtlCache<ChatPointer | undefined>(() => 10 * 60_000, 10_000);

/** A chat of this bot, for the Bot API: anything else (unknown, another bot's) is a 404. */
export async function resolveBotChat(botId: string, chatId: string): Promise<ChatOwner> {
  const pointer = await pointerCache.get(chatId, async () => {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chatPointer(chatId) }));
    return out.Item && pointerFromItem(out.Item);
  });
  if (!pointer || pointer.bot_id !== botId) throw new NotFoundError('Chat not found');
  return { userId: pointer.user_id, botId, externalId: pointer.external_id };
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
