// Messages: their shape, and one transaction per send (chat activity + message); history.ts reads them, edits.ts edits.
import { createHash } from 'node:crypto';
import { config } from '../shared/config';
import { ConflictError } from '../shared/errors';
import { rateLimited, rateUpdate, type RateLimit } from './rate';
import { transactWrite, type TransactItem } from '../aws/transact';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../aws/dynamo';
import { rejectChatAccess, type ChatOwner } from './chats';
import { keys } from './keys';
import { newMessageId } from '../shared/ids';
import { getOwnedFiles, toFileJson, toStoredFile, type FileJson, type StoredFile } from './files';

/** A message to send, as either API gives it (files by id, linked files as stored). */
export interface MessageInput {
  content: string;
  content_type: string;
  files: string[];
  complete_files: StoredFile[];
  /** From client_message_id or the Idempotency-Key header. */
  idempotency_key?: string;
}

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
          ExpressionAttributeValues: { ':now': createdAt, ':act': keys.chatActivity(input.botId, createdAt, input.chatId).gsi1sk, ':message': 'message', ':one': 1 },
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
