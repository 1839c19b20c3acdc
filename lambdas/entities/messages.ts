// Messages: their shape as the APIs show it, the stored item, and its put; flows/send.ts sends, flows/history.ts reads, flows/edit.ts edits.
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, optional, queryAll, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { keys, type Key } from './keys';
import { toFileJson, type FileJson, type StoredFile } from './files';
import { attributesJson, type ContentAttributesJson, type StoredInteractive } from './interactive';

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
  /** When it last changed, by an edit of the bot side or the visitor's answer (null: never): a client keeps the copy with the latest. */
  edited_at: string | null;
  created_at: string;
  /** Only on an interactive message (entities/interactive.ts). */
  content_attributes?: ContentAttributesJson;
}

/** The stored item, as the table (and the stream publisher) sees it. */
export interface MessageItem extends Omit<Message, 'files' | 'edited_at' | 'content_attributes'>, StoredInteractive {
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
  /** The bot's number of the last edit applied (flows/edit.ts). */
  edit_version?: number;
}

/** The codec: a message item as DynamoDB (or its stream) gives it; attributes of other items' shapes are left behind. */
export const messageFromItem = (raw: RawItem): MessageItem => {
  const item = raw as Stored<MessageItem>;
  return {
    id: item.id,
    chat_id: item.chat_id,
    user_id: item.user_id,
    bot_id: item.bot_id,
    content: item.content,
    content_type: item.content_type,
    sender_type: item.sender_type,
    sender: item.sender,
    files: item.files ?? null,
    is_edited: Boolean(item.is_edited),
    created_at: item.created_at,
    ...optional(item, 'external_id', 'edited_at', 'webhook', 'attaches', 'count_in_chat', 'ttl', 'edit_version', 'content_attributes', 'submitted_values', 'submitted_at'),
  };
};

/** The messages among a Query's items (the chat's markers sit at both ends of its range). */
const messagesOf = (items: RawItem[]): MessageItem[] => items.filter((i) => i.entity === 'message').map(messageFromItem);

/** The message as the APIs show it (file URLs presigned now). */
export async function toMessage(m: MessageItem): Promise<Message> {
  const attributes = attributesJson(m);
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
    ...(attributes && { content_attributes: attributes }),
  };
}

/**
 * Puts the message if its key is free. A refused put whose item is this very message (an SDK retry of a put
 * whose reply was lost) is a success; another item under the key (two writers drawing the same id in one
 * millisecond) is `false`.
 */
export async function putMessage(item: MessageItem): Promise<boolean> {
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

/** The message, strongly consistent; undefined when there is none. */
export async function readMessage(userId: string, chatId: string, id: string): Promise<MessageItem | undefined> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.message(userId, chatId, id), ConsistentRead: true }));
  return out.Item?.entity === 'message' ? messageFromItem(out.Item) : undefined;
}

/**
 * A chat's messages from `fromId` on (inclusive), oldest first, strongly consistent: one Query of at most `limit`
 * items of its range (the end marker among them).
 */
export async function messagesFrom(userId: string, chatId: string, fromId: string, limit: number): Promise<MessageItem[]> {
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':from': keys.messagePrefix(chatId) + fromId, ':to': keys.chatEnd(userId, chatId).sk },
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return messagesOf(out.Items ?? []);
}

/**
 * One strongly consistent Query of at most `limit` items of a chat's range, `low` to `high` (sort keys, both
 * inclusive), newest first or oldest first. `found`: whether it returned any item at all (a marker counts).
 */
export async function messagesInRange(
  userId: string,
  range: { low: string; high: string; newestFirst: boolean; limit: number },
): Promise<{ found: boolean; messages: MessageItem[] }> {
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
      ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':low': range.low, ':high': range.high },
      ScanIndexForward: !range.newestFirst,
      ConsistentRead: true,
      Limit: range.limit,
    }),
  );
  const items = out.Items ?? [];
  return { found: items.length > 0, messages: messagesOf(items) };
}

/** Every message of a chat from sort key `low` on, oldest first: the Query of its range, page after page, strongly consistent. */
export async function chatMessagesFrom(userId: string, chatId: string, low: string): Promise<MessageItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':low': low, ':high': keys.chatEnd(userId, chatId).sk },
    ConsistentRead: true,
  });
  return messagesOf(items);
}

/** A message's key and dates, as a re-dating reads them. */
export interface MessageDates {
  key: Key;
  created_at: string;
  ttl?: number;
}

/** Every message of a chat, its key and dates only: the Query of its range, page after page, strongly consistent. */
export async function chatMessageDates(userId: string, chatId: string): Promise<MessageDates[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':low': keys.chatStart(userId, chatId).sk, ':high': keys.chatEnd(userId, chatId).sk },
    ProjectionExpression: 'pk, sk, entity, created_at, #ttl',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ConsistentRead: true,
  });
  return items
    .filter((i) => i.entity === 'message')
    .map((raw) => {
      const item = raw as Stored<MessageDates & Key>;
      return { key: { pk: item.pk, sk: item.sk }, created_at: item.created_at, ...optional(item, 'ttl') };
    });
}

/**
 * The dates of one side's messages in a chat from sort key `low` on (created_at and ttl only, the side's filter
 * applied by DynamoDB): the Query of that range, page after page, strongly consistent.
 */
export async function sideMessageDates(userId: string, chatId: string, low: string, senderType: SenderType): Promise<Omit<MessageDates, 'key'>[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
    FilterExpression: 'sender_type = :side',
    ProjectionExpression: 'created_at, #ttl',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':low': low, ':high': keys.chatEnd(userId, chatId).sk, ':side': senderType },
    ConsistentRead: true,
  });
  return items.map((raw) => {
    const item = raw as Stored<Omit<MessageDates, 'key'>>;
    return { created_at: item.created_at, ...optional(item, 'ttl') };
  });
}

/** An edit of a message of the bot side, as one conditional UpdateItem writes it (flows/edit.ts). */
export interface MessageEdit {
  content: string;
  /** The bot's number for it: written only above the last one applied. */
  version?: number;
  /** Its time: written only after the last edit's. */
  at: string;
  /** What the bot's retention keeps: created at or after `since`, its ttl not past `nowSeconds`. */
  kept: { since?: string; nowSeconds: number };
}

/** Applies the edit if the message is an outcoming one that takes it: the message as edited, or undefined (refused). */
export async function applyEdit(key: Key, edit: MessageEdit): Promise<MessageItem | undefined> {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: `SET content = :content, is_edited = :true, edited_at = :now${edit.version !== undefined ? ', edit_version = :version' : ''}`,
        ConditionExpression:
          'entity = :message AND sender_type = :outcoming AND (attribute_not_exists(edited_at) OR edited_at < :now)' +
          ' AND (attribute_not_exists(#ttl) OR #ttl > :seconds)' +
          (edit.kept.since ? ' AND created_at >= :since' : '') +
          (edit.version !== undefined ? ' AND (attribute_not_exists(edit_version) OR edit_version < :version)' : ''),
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':content': edit.content,
          ':true': true,
          ':now': edit.at,
          ':message': 'message',
          ':outcoming': 'outcoming',
          ':seconds': edit.kept.nowSeconds,
          ...(edit.kept.since && { ':since': edit.kept.since }),
          ...(edit.version !== undefined && { ':version': edit.version }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return messageFromItem(out.Attributes ?? {});
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    return undefined;
  }
}

/** Records the visitor's answer if none is recorded yet and `at` is after its last edit: the message as answered, or undefined (refused). */
export async function applyAnswer(key: Key, submittedValues: string, at: string): Promise<MessageItem | undefined> {
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        // edited_at moves with it: the publisher sends a message whose edited_at changed as a new version.
        UpdateExpression: 'SET submitted_values = :values, submitted_at = :at, edited_at = :at',
        // edited_at only moves forward, as an edit's does.
        ConditionExpression:
          'entity = :message AND attribute_exists(content_attributes) AND attribute_not_exists(submitted_at) AND (attribute_not_exists(edited_at) OR edited_at < :at)',
        ExpressionAttributeValues: { ':values': submittedValues, ':at': at, ':message': 'message' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return messageFromItem(out.Attributes ?? {});
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    return undefined;
  }
}
