// Chats: the owner's copy (list, counters) plus a pointer by chat id, created together in one transaction.
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, dynamo, queryAll, tableName } from '../aws/dynamo';
import { InvalidInputError, ConflictError, ForbiddenError, NotFoundError } from '../shared/errors';
import { config } from '../shared/config';
import { rateLimited, rateUpdate, type RateLimit } from './rate';
import { transactWrite, type TransactItem } from '../aws/transact';
import { TtlCache } from '../shared/cache';
import { keys } from './keys';
import { byCodeUnits, isUuid, newUuid } from '../shared/ids';
import { retainedUnread, retentionWindow, type RetentionWindow } from './retention';
import { resetUnread } from './chat-activity';
import { erasedUserError } from './revocation';

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
const storedInfo = (info: Record<string, unknown>): string => JSON.stringify(info);
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

export async function createChat({ userId, botId, externalId }: ChatOwner, input: NewChat): Promise<Chat> {
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
  const { chatsPerUser, chatsPerMinute } = config().limits;
  const rate: RateLimit = { name: 'chats', subject: userId, perMinute: chatsPerMinute };
  const rateItem = rateUpdate(rate);
  const items: TransactItem[] = [
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.chat(userId, id),
          entity: 'chat',
          ...chat,
          additional_info: storedInfo(chat.additional_info),
          user_id: userId,
          bot_id: botId,
          external_id: externalId,
          unread_msg_by_operator: 0,
          last_read_at: null,
          ...keys.chatActivity(botId, now, id),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.chatPointer(id), entity: 'chat_pointer', chat_id: id, user_id: userId, bot_id: botId, external_id: externalId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: table, Item: { ...keys.chatStart(userId, id), ...marker } } },
    { Put: { TableName: table, Item: { ...keys.chatEnd(userId, id), ...marker } } },
  ];
  // Guards ride in the same transaction: the user's chat count, then this minute's creation count.
  const countAt = chatsPerUser > 0 ? items.length : -2;
  if (chatsPerUser > 0) {
    items.push({
      Update: {
        TableName: table,
        Key: keys.userStats(userId),
        UpdateExpression: 'SET entity = :entity ADD chats :one',
        ConditionExpression: 'attribute_not_exists(chats) OR chats < :max',
        ExpressionAttributeValues: { ':entity': 'user_stats', ':one': 1, ':max': chatsPerUser },
      },
    });
  }
  const rateAt = rateItem ? items.length : -2;
  if (rateItem) items.push({ Update: rateItem });
  const failed = await transactWrite(items);
  if (failed === countAt) throw new ConflictError(`A user may have at most ${chatsPerUser} chats`);
  if (failed === rateAt) throw rateLimited(rate);
  if (failed >= 0) throw new Error(`chat ${id} collided with an existing item`); // UUIDs: not expected
  return chat;
}

/**
 * Every chat of the user, newest activity first; strongly consistent, so a chat just made is listed. Unread
 * counters as the bot's retention leaves them (domain/retention.ts).
 */
export async function listChats(userId: string, w: RetentionWindow = retentionWindow({})): Promise<Chat[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :chat)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':chat': keys.chatPrefix },
    ConsistentRead: true,
  });
  const chats = await Promise.all(items.map(async (item) => ({ ...toChat(item), unread_msg_by_user: await retainedUnread(item, 'user', w) })));
  return chats.sort((a, b) => byCodeUnits(b.updated_at, a.updated_at) || byCodeUnits(b.id, a.id));
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

/**
 * The user's own chat, for a client request that writes to it (a send, a read; lambdas/access builds its scope
 * with it): the chat and the request's erasure check in one strongly consistent BatchGetItem; 401 (erased), 403
 * or 404 otherwise.
 */
export async function ownChat(userId: string, chatId: string): Promise<Record<string, unknown>> {
  const items = await batchGet([keys.chat(userId, chatId), keys.revokedUser(userId)], true);
  if (items.some((i) => i.entity === 'revoked_user')) throw erasedUserError();
  return items.find((i) => i.entity === 'chat') ?? (await rejectChatAccess(userId, chatId));
}

/** The user's read (POST …/read) of its own chat, as its scope read it (ownChat): the reset (domain/chat-activity.ts resetUnread). */
export async function markChatRead({ userId, chatId, chat }: { userId: string; chatId: string; chat: Record<string, unknown> }): Promise<void> {
  if (!(await resetUnread(userId, chatId, 'user', chat.counted_seq))) await rejectChatAccess(userId, chatId);
}

/** The bot side's read: the operator has seen the user's messages (no event for the user). */
export async function markChatReadByOperator(userId: string, chatId: string): Promise<void> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ProjectionExpression: 'counted_seq', ConsistentRead: true }));
  if (!out.Item || !(await resetUnread(userId, chatId, 'operator', out.Item.counted_seq))) throw new NotFoundError('Chat not found');
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

const CURSOR_KEYS = ['gsi1pk', 'gsi1sk', 'pk', 'sk'];
/** An activity time as every item stores it (Date#toISOString). */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function decodeCursor(cursor: string, botId: string): Record<string, string> {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  const ok =
    typeof key === 'object' &&
    key !== null &&
    Object.keys(key).sort().join() === CURSOR_KEYS.join() &&
    Object.values(key).every((v) => typeof v === 'string') &&
    isChatKeyOf(key as Record<string, string>, botId);
  if (!ok) throw new InvalidInputError('Invalid cursor');
  return key as Record<string, string>;
}

/**
 * A chat's gsi1 key of this bot as keys.ts builds it (a user and a chat id, an activity time): anything else,
 * e.g. an empty or over-long value DynamoDB itself would refuse as a start key, is not a cursor of ours.
 */
function isChatKeyOf(key: Record<string, string>, botId: string): boolean {
  const [userId, chatId] = [key.pk.slice(keys.userPartition('').length), key.sk.slice(keys.chatPrefix.length)];
  const at = key.gsi1sk.slice(0, -(chatId.length + 1));
  if (!isUuid(userId) || !isUuid(chatId) || !ISO_UTC.test(at)) return false;
  const made: Record<string, string> = { ...keys.chat(userId, chatId), ...keys.chatActivity(botId, at, chatId) };
  return CURSOR_KEYS.every((k) => made[k] === key[k]);
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

/**
 * The bot's chats, newest activity first, one page; each with its user (one BatchGet for the page) and its
 * unread counters as the bot's retention leaves them.
 */
export async function listBotChats(botId: string, limit: number, cursor?: string, w: RetentionWindow = retentionWindow({})): Promise<BotChatPage> {
  const out = await botChatsPage(botId, { limit, newestFirst: true, start: cursor ? decodeCursor(cursor, botId) : undefined });
  const items = out.Items ?? [];
  const externalIds = [...new Set(items.map((i) => i.external_id as string | undefined).filter((e): e is string => !!e))];
  const users = new Map((await batchGet(externalIds.map((e) => keys.user(botId, e)))).map((u) => [u.external_id as string, u]));
  const chats = await Promise.all(
    items.map(async (item) => {
      const user = users.get(item.external_id as string);
      const [byUser, byOperator] = await Promise.all([retainedUnread(item, 'user', w), retainedUnread(item, 'operator', w)]);
      return {
        ...toChat(item),
        unread_msg_by_user: byUser,
        unread_count: byOperator,
        user: {
          id: item.user_id as string,
          external_id: (item.external_id as string | undefined) ?? null,
          first_name: (user?.first_name as string) ?? '',
          last_name: (user?.last_name as string) ?? '',
        },
      };
    }),
  );
  const last = out.LastEvaluatedKey;
  return {
    chats,
    next_cursor: last ? Buffer.from(JSON.stringify(Object.fromEntries(CURSOR_KEYS.map((k) => [k, last[k]])))).toString('base64url') : null,
  };
}
