// Messages: one transaction per send (chat activity + message), one Query per history page.
import { createHash } from 'node:crypto';
import { config } from './config';
import { ConflictError, ForbiddenError, NotFoundError } from './errors';
import { rateLimited, rateUpdate, type RateLimit } from './rate';
import { transactWrite, type TransactItem } from '../aws/transact';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import { activityKey, rejectChatAccess, type ChatOwner } from './chats';
import { keys } from './keys';
import { byCodeUnits, newMessageId } from './ids';
import { getOwnedFiles, toFileJson, toStoredFile, type FileJson, type StoredFile } from './files';
import type { MessageInput } from './params';

export type SenderType = 'incoming' | 'outcoming';
export type Sender = 'user' | 'bot' | 'operator';

export interface Message {
  id: string;
  chat_id: string;
  content: string;
  content_type: string;
  sender_type: SenderType;
  sender: Sender;
  files: FileJson[] | null;
  is_edited: boolean;
  /** When the bot side last edited it (null: never): a client keeps the copy with the latest. */
  edited_at: string | null;
  created_at: string;
}

export interface NewMessage {
  userId: string;
  botId: string;
  externalId?: string;
  chatId: string;
  content: string;
  content_type: string;
  files: StoredFile[];
  sender: Sender;
  /** The bot has a webhook: marks the item so the dispatcher's stream filter lets it through. */
  webhook?: boolean;
  /** client_message_id / Idempotency-Key: a retry with it returns the first message. */
  idempotencyKey?: string;
}

/** The stored item, as the table (and the stream publisher) sees it. */
export interface MessageItem extends Omit<Message, 'files' | 'edited_at'> {
  /** Set by the first edit (absent until then). */
  edited_at?: string;
  user_id: string;
  bot_id: string;
  external_id?: string;
  files: StoredFile[] | null;
  webhook?: true;
}

export async function toMessage(item: MessageItem | Record<string, unknown>): Promise<Message> {
  const m = item as MessageItem;
  return {
    id: m.id,
    chat_id: m.chat_id,
    content: m.content,
    content_type: m.content_type,
    sender_type: m.sender_type,
    sender: m.sender,
    files: m.files?.length ? await Promise.all(m.files.map(toFileJson)) : null,
    is_edited: Boolean(m.is_edited),
    edited_at: m.edited_at ?? null,
    created_at: m.created_at,
  };
}

/** What a send carries, hashed: a retry with the same idempotency key must carry the same message. */
function fingerprint(input: NewMessage): string {
  const files = input.files.map((f) => f.id ?? `${f.type}:${f.url}`);
  return createHash('sha256').update(JSON.stringify([input.content, input.content_type, files, input.sender])).digest('hex');
}

const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export interface Created {
  item: MessageItem;
  /** false when an idempotency key replayed an earlier send (nothing new was written). */
  created: boolean;
}

/**
 * One TransactWriteItems: the chat must be the owner's (its existence under the owner's key proves it),
 * its activity and the other side's unread counter move, and the message is put; when given, the
 * idempotency key and the user's rate counter are items of the same transaction. A message-id collision
 * (two writers in one millisecond drawing the same random digits) is retried with a new id.
 */
export async function createMessage(input: NewMessage): Promise<Created> {
  const incoming = input.sender === 'user';
  const side = incoming ? 'user' : 'bot';
  const print = fingerprint(input);
  const rate: RateLimit = { name: 'messages', subject: input.userId, perMinute: incoming ? config().limits.messagesPerMinute : 0 };
  for (let attempt = 0; ; attempt++) {
    const now = Date.now();
    const createdAt = new Date(now).toISOString();
    const item: MessageItem = {
      id: newMessageId(now),
      chat_id: input.chatId,
      user_id: input.userId,
      bot_id: input.botId,
      external_id: input.externalId,
      content: input.content,
      content_type: input.content_type,
      sender_type: incoming ? 'incoming' : 'outcoming',
      sender: input.sender,
      files: input.files.length ? input.files : null,
      is_edited: false,
      created_at: createdAt,
      ...(input.webhook && { webhook: true as const }),
    };
    const rateItem = rateUpdate(rate, now);
    // Ordered by which failed condition wins: not the caller's chat, then a replayed idempotency key (even
    // when now rate limited), then the rate limit, then a message-id collision.
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.chat(input.userId, input.chatId),
          UpdateExpression: 'SET updated_at = :now, gsi1sk = :act, last_event = :message ADD #unread :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#unread': incoming ? 'unread_msg_by_operator' : 'unread_msg_by_user' },
          ExpressionAttributeValues: { ':now': createdAt, ':act': activityKey(createdAt, input.chatId), ':message': 'message', ':one': 1 },
        },
      },
    ];
    const keyAt = input.idempotencyKey ? items.length : -2;
    if (input.idempotencyKey) {
      items.push({
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.idempotency(input.chatId, side, input.idempotencyKey),
            entity: 'idempotency',
            message_id: item.id,
            fingerprint: print,
            ttl: Math.floor(now / 1000) + IDEMPOTENCY_TTL_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      });
    }
    const rateAt = rateItem ? items.length : -2;
    if (rateItem) items.push({ Update: rateItem });
    const messageAt = items.length;
    items.push({
      Put: {
        TableName: tableName(),
        Item: { ...keys.message(input.userId, input.chatId, item.id), entity: 'message', ...item },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
    const failed = await transactWrite(items);
    if (failed < 0) return { item, created: true };
    if (failed === 0) return rejectChatAccess(input.userId, input.chatId);
    if (failed === keyAt) return replay(input, side, print);
    if (failed === rateAt) throw rateLimited(rate, now);
    if (failed === messageAt && attempt < 3) continue;
    throw new Error(`message ${item.id} collided ${attempt + 1} times`);
  }
}

async function replay(input: NewMessage, side: 'user' | 'bot', print: string): Promise<Created> {
  const key = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.idempotency(input.chatId, side, input.idempotencyKey as string), ConsistentRead: true }),
  );
  if (key.Item?.fingerprint !== print) {
    throw new ConflictError('This idempotency key was already used for a different message in this chat');
  }
  const message = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.message(input.userId, input.chatId, key.Item.message_id as string), ConsistentRead: true }),
  );
  return { item: message.Item as MessageItem, created: false };
}

/** Sends a message into a chat of `owner` (client: the user; Bot API: the bot or an operator) → the Message. */
export async function sendMessage(
  owner: ChatOwner,
  chatId: string,
  body: MessageInput,
  sender: Sender,
  webhook = false,
): Promise<{ message: Message; created: boolean }> {
  const uploaded = (await getOwnedFiles(owner.userId, body.files)).map(toStoredFile);
  const { item, created } = await createMessage({
    ...owner,
    chatId,
    content: body.content,
    content_type: body.content_type,
    files: [...uploaded, ...body.complete_files],
    sender,
    webhook,
    idempotencyKey: body.idempotency_key,
  });
  return { message: await toMessage(item), created };
}

export interface HistoryPage {
  limit: number;
  /** Only messages newer than this id (catch-up after a reconnect), oldest first. */
  after?: string;
  /** Only messages older than this id (paging back). */
  before?: string;
}

/**
 * One strongly consistent Query of the owner's partition. The chat's start/end markers sit at both ends
 * of its message range, so an owned chat always returns an item; an empty result means "not yours".
 */
export async function listMessages(userId: string, chatId: string, page: HistoryPage): Promise<MessageItem[]> {
  const prefix = `MSG#${chatId}#`;
  const low = page.after ? prefix + page.after : keys.chatStart(userId, chatId).sk;
  const high = page.before ? prefix + page.before : keys.chatEnd(userId, chatId).sk;
  // Without `after` we want the newest page, so read downwards; with it, upwards from `after`.
  const newestFirst = !page.after;
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
      ExpressionAttributeValues: { ':pk': `USER#${userId}`, ':low': low, ':high': high },
      ScanIndexForward: !newestFirst,
      ConsistentRead: true,
      // The page, a marker, and the bound ids themselves (BETWEEN is inclusive).
      Limit: page.limit + 3,
    }),
  );
  const items = out.Items ?? [];
  if (items.length === 0) {
    // Both bounds given and nothing between them: the one case the markers cannot answer.
    if (page.after && page.before && (await chatExists(userId, chatId))) return [];
    return rejectChatAccess(userId, chatId);
  }
  const messages = items
    .filter((i) => i.entity === 'message' && i.id !== page.after && i.id !== page.before)
    .slice(0, page.limit) as MessageItem[];
  return messages.sort((a, b) => byCodeUnits(a.id, b.id));
}

async function chatExists(userId: string, chatId: string): Promise<boolean> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ProjectionExpression: 'pk', ConsistentRead: true }),
  );
  return Boolean(out.Item);
}

export interface Edit {
  content: string;
  /** The bot's own number for this edit: applied only above the last one applied (edits sent out of order). */
  version?: number;
}

/**
 * The bot side edits one of its own messages (a streamed answer: many edits a second) in one UpdateItem.
 * Edits apply in order: `edited_at` only moves forward (so a client keeps the copy with the latest), and
 * with `version` an edit older than the last one applied is refused (409) rather than written over it. The
 * stream record of the update is the publication. A refused edit writes nothing.
 */
export async function editMessage(owner: ChatOwner, chatId: string, messageId: string, edit: Edit): Promise<Message> {
  const key = keys.message(owner.userId, chatId, messageId);
  let now = new Date().toISOString();
  for (let attempt = 0; ; attempt++) {
    try {
      const out = await dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: `SET content = :content, is_edited = :true, edited_at = :now${edit.version !== undefined ? ', edit_version = :version' : ''}`,
          ConditionExpression:
            'entity = :message AND sender_type = :outcoming AND (attribute_not_exists(edited_at) OR edited_at < :now)' +
            (edit.version !== undefined ? ' AND (attribute_not_exists(edit_version) OR edit_version < :version)' : ''),
          ExpressionAttributeValues: {
            ':content': edit.content,
            ':true': true,
            ':now': now,
            ':message': 'message',
            ':outcoming': 'outcoming',
            ...(edit.version !== undefined && { ':version': edit.version }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return toMessage(out.Attributes as MessageItem);
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
    }
    // Error path only: say why, or move past an edit stamped in the same millisecond (or by a clock ahead).
    const { Item: item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    if (!item || item.entity !== 'message') throw new NotFoundError('Message not found');
    if (item.sender_type !== 'outcoming') throw new ForbiddenError("Only the bot's or an operator's messages can be edited");
    if (edit.version !== undefined && typeof item.edit_version === 'number' && item.edit_version >= edit.version) {
      throw new ConflictError(`A newer edit of this message is applied already (version ${item.edit_version})`);
    }
    if (attempt >= 3) throw new ConflictError('The message is being edited concurrently; retry');
    now = new Date(Math.max(Date.now(), (Date.parse(String(item.edited_at)) || 0) + 1)).toISOString();
  }
}
