// Messages: their shape as the APIs show it, the stored item, and its put; flows/send.ts sends, flows/history.ts reads, flows/edit.ts edits.
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, dynamo, isConditionFailed, optional, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { keys } from './keys';
import { toFileJson, type FileJson, type StoredFile } from './files';

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
    ...optional(item, 'external_id', 'edited_at', 'webhook', 'attaches', 'count_in_chat', 'ttl', 'edit_version'),
  };
};

/** The message as the APIs show it (file URLs presigned now). */
export async function toMessage(m: MessageItem): Promise<Message> {
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
  return out.Item && messageFromItem(out.Item);
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
  return (out.Items ?? []).filter((i) => i.entity === 'message').map(messageFromItem);
}
