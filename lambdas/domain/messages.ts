// Messages: their shape, and a send (no transaction: the chat moves from the stream; docs/architecture.md); history.ts reads them, edits.ts edits.
import { createHash } from 'node:crypto';
import { config } from '../shared/config';
import { consumeRate, type RateLimit } from './rate';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import type { ChatOwner } from './chats';
import { claimKey, idempotencyKey, releaseKey } from './idempotency';
import { keys } from './keys';
import { newMessageId } from '../shared/ids';
import { getOwnedFiles, toFileJson, toStoredFile, type FileJson, type StoredFile } from './files';
import { expiryOf, type Retained, type RetentionWindow } from './retention';

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
  /**
   * Marks the item for the webhook dispatcher's stream filter: a user message of a bot with a webhook, or a
   * reply of a bot with a webhook and unread reminders.
   */
  webhook?: boolean;
  /** client_message_id / Idempotency-Key: a retry with it returns the first message. */
  idempotencyKey?: string;
  /** The bot's retention: the message expires that long after it was sent. */
  retention?: Retained;
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
  /** Marks a message that attaches uploaded files, for the stream: they are then kept as its bot's retention says (files-sent.ts). */
  attaches?: true;
  /** The chat's counters and activity are the stream's to move (realtime/publish.ts); absent on older items. */
  count_in_chat?: true;
  /** When it expires (epoch seconds): its bot's retention; absent: kept for ever. */
  ttl?: number;
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

export interface Created {
  item: MessageItem;
  /** false when an idempotency key replayed an earlier send (nothing new was written). */
  created: boolean;
}

function newItem(input: NewMessage, now: number): MessageItem {
  const incoming = input.sender === 'user';
  const ttl = input.retention && expiryOf(input.retention, now);
  return {
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
    created_at: new Date(now).toISOString(),
    ...(input.webhook && { webhook: true as const }),
    ...(input.files.some((f) => f.id) && { attaches: true as const }),
    count_in_chat: true,
    ...(ttl !== undefined && { ttl }),
  };
}

/**
 * Puts the message if its key is free. A refused put whose item is this very message (an SDK retry of a put
 * whose reply was lost) is a success; another item under the key (two writers drawing the same id in one
 * millisecond) is `false`.
 */
async function putMessage(item: MessageItem): Promise<boolean> {
  try {
    await dynamo.send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.message(item.user_id, item.chat_id, item.id), entity: 'message', ...item },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    const old = conditionFailedItem(err);
    return old?.created_at === item.created_at && old?.content === item.content && old?.sender === item.sender;
  }
}

/**
 * Sends without a transaction (docs/architecture.md "Sending a message") into a chat its caller's scope proved
 * (lambdas/access: a client's own chat, read with the erasure check; a Bot API chat of the bot): the idempotency
 * key claimed with the message it stands for, the rate counter moved, and the message put. The chat's activity
 * and unread counter follow from the stream (realtime/publish.ts) before the message is published. Refusals in
 * the order they win: a replayed key (even when now rate limited), the rate limit; a refused send leaves nothing
 * behind.
 */
export async function createMessage(input: NewMessage): Promise<Created> {
  const incoming = input.sender === 'user';
  const rate: RateLimit = { name: 'messages', subject: input.userId, perMinute: incoming ? config().limits.messagesPerMinute : 0 };
  const now = Date.now();
  let item = newItem(input, now);
  const key = input.idempotencyKey ? idempotencyKey(input.chatId, incoming ? 'user' : 'bot', input.idempotencyKey) : undefined;
  if (key) {
    const earlier = await claimKey(key, item, fingerprint(input), now, putMessage);
    if (earlier) return earlier;
  }
  try {
    await consumeRate(rate);
  } catch (err) {
    if (key) await releaseKey(key, item.id);
    throw err;
  }
  for (let attempt = 0; !(await putMessage(item)); attempt++) {
    // The claim names this id: a keyed send cannot take another (a collision is 1 in 10^9 per millisecond).
    if (key || attempt >= 3) throw new Error(`message ${item.id} collided ${attempt + 1} times`);
    item = newItem(input, Date.now());
  }
  return { item, created: true };
}

/** How the bot's settings mark its sends for the webhook dispatcher's stream filter (made once per request, with its scope). */
export interface WebhookMarks {
  /** A user message: the bot has a webhook (the filter spares the dispatcher every message of bots without one). */
  userMessages: boolean;
  /** A reply of the bot side: the bot has a webhook and unread reminders (the dispatcher schedules them). */
  replies: boolean;
}

export const webhookMarks = (bot: { webhook_url?: string; unread_reminder_seconds?: number }): WebhookMarks => ({
  userMessages: Boolean(bot.webhook_url),
  replies: Boolean(bot.webhook_url && bot.unread_reminder_seconds),
});

/** What a send needs of its request's scope: a chat the caller may write to, and what follows from the bot. */
export interface SendScope {
  owner: ChatOwner;
  chatId: string;
  bot: Retained;
  window: RetentionWindow;
  marks: WebhookMarks;
}

/** Sends a message into the scope's chat (client: the user; Bot API: the bot or an operator) → the Message. */
export async function sendMessage(scope: SendScope, body: MessageInput, sender: Sender): Promise<{ message: Message; created: boolean }> {
  const uploaded = (await getOwnedFiles(scope.owner.userId, body.files, scope.window)).map(toStoredFile);
  const { item, created } = await createMessage({
    ...scope.owner,
    chatId: scope.chatId,
    content: body.content,
    content_type: body.content_type,
    files: [...uploaded, ...body.complete_files],
    sender,
    webhook: sender === 'user' ? scope.marks.userMessages : scope.marks.replies,
    idempotencyKey: body.idempotency_key,
    retention: scope.bot,
  });
  return { message: await toMessage(item), created };
}
