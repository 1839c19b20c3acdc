// A send (no transaction: the chat moves from the stream; docs/architecture.md): the chat and the files it
// attaches checked, the idempotency key claimed, the rate counted, the message put.
import { createHash } from 'node:crypto';
import { config } from '../shared/config';
import { ConflictError, ForbiddenError, InvalidInputError } from '../shared/errors';
import { newMessageId } from '../shared/ids';
import { readFiles, toStoredFile, type FileRecord, type StoredFile } from '../entities/files';
import { putMessage, toMessage, type Message, type MessageItem, type Sender } from '../entities/messages';
import type { ChatOwner } from '../entities/chats';
import { cardMediaIds, storedAttributes, type ContentAttributes } from '../entities/interactive';
import { LIMITS } from '../policies/limits';
import { consumeRate, type RateLimit } from '../policies/rate';
import { claimKey, idempotencyKey, releaseKey } from '../policies/idempotency';
import { expiryOf, isRetained, retentionWindow, type Retained, type RetentionWindow } from '../policies/retention';

/** A message to send, as either API gives it (files by id, linked files as stored). */
export interface MessageInput {
  content: string;
  content_type: string;
  files: string[];
  complete_files: StoredFile[];
  /** An interactive message's shape (Bot API only; entities/interactive.ts). */
  content_attributes?: ContentAttributes;
  /** From client_message_id or the Idempotency-Key header. */
  idempotency_key?: string;
}

export interface NewMessage {
  userId: string;
  botId: string;
  externalId?: string;
  chatId: string;
  content: string;
  content_type: string;
  files: StoredFile[];
  content_attributes?: ContentAttributes;
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

/** What a send carries, hashed: a retry with the same idempotency key must carry the same message. */
function fingerprint(input: NewMessage): string {
  const files = input.files.map((f) => f.id ?? `${f.type}:${f.url}`);
  return createHash('sha256').update(JSON.stringify([input.content, input.content_type, files, input.sender, ...(input.content_attributes ? [input.content_attributes] : [])])).digest('hex');
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
    ...(input.content_attributes && storedAttributes(input.content_attributes)),
    is_edited: false,
    created_at: new Date(now).toISOString(),
    ...(input.webhook && { webhook: true as const }),
    ...(input.files.some((f) => f.id) && { attaches: true as const }),
    count_in_chat: true,
    ...(ttl !== undefined && { ttl }),
  };
}

/**
 * Reads the files a message attaches; each must exist, have been uploaded by this user, and have passed its
 * checks (a direct upload still in flight is a 409, a rejected one a 400).
 */
export async function getOwnedFiles(
  userId: string,
  ids: string[],
  w: RetentionWindow = retentionWindow({}),
  field: (i: number) => string = (i) => `files.${i}`,
): Promise<FileRecord[]> {
  // Strongly consistent: a file uploaded a moment ago is attached at once.
  const byId = new Map((await readFiles(ids, true)).map((f) => [f.id, f]));
  return ids.map((id, i) => {
    const file = byId.get(id);
    if (!file || !isRetained(file, w)) throw new InvalidInputError(`${field(i)}: no uploaded file has id ${id}`);
    if (file.user_id !== userId) throw new ForbiddenError(`${field(i)}: file ${id} was not uploaded by this user`);
    if (file.status === 'pending') throw new ConflictError(`${field(i)}: file ${id} is still uploading; send it once its status is uploaded`);
    if (file.status === 'rejected') throw new InvalidInputError(`${field(i)}: file ${id} was rejected: ${file.reason ?? 'it failed the checks'}`);
    return file;
  });
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

/**
 * The photos of this chat that cards name by file id, not already in `files`: the message attaches them, so
 * they are kept as long as it is and its `files` give their URLs.
 */
async function cardMedia(scope: SendScope, body: MessageInput): Promise<StoredFile[]> {
  const named = cardMediaIds(body.content_type, body.content_attributes).filter((m, i, all) => !body.files.includes(m.id) && all.findIndex((o) => o.id === m.id) === i);
  if (named.length === 0) return [];
  const field = (i: number) => `content_attributes.items.${named[i].card}.media_url`;
  const files = await getOwnedFiles(scope.owner.userId, named.map((m) => m.id), scope.window, field);
  files.forEach((f, i) => {
    if (f.type !== 'photo') throw new InvalidInputError(`${field(i)}: file ${f.id} is a ${f.type}, not a photo`);
  });
  if (body.files.length + files.length + body.complete_files.length > LIMITS.filesPerMessage) {
    throw new InvalidInputError(`A message carries at most ${LIMITS.filesPerMessage} files, card photos given by file id included`);
  }
  return files.map(toStoredFile);
}

/** Sends a message into the scope's chat (client: the user; Bot API: the bot or an operator) → the Message. */
export async function sendMessage(scope: SendScope, body: MessageInput, sender: Sender): Promise<{ message: Message; created: boolean }> {
  const uploaded = (await getOwnedFiles(scope.owner.userId, body.files, scope.window)).map(toStoredFile);
  const media = await cardMedia(scope, body);
  const { item, created } = await createMessage({
    ...scope.owner,
    chatId: scope.chatId,
    content: body.content,
    content_type: body.content_type,
    files: [...uploaded, ...media, ...body.complete_files],
    content_attributes: body.content_attributes,
    sender,
    webhook: sender === 'user' ? scope.marks.userMessages : scope.marks.replies,
    idempotencyKey: body.idempotency_key,
    retention: scope.bot,
  });
  return { message: await toMessage(item), created };
}
