// A chat's history: one strongly consistent Query of the owner's partition per page.
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, queryAll, tableName } from '../aws/dynamo';
import { byCodeUnits } from '../shared/ids';
import { rejectChatAccess } from '../entities/chats';
import { keys } from '../entities/keys';
import { messageFromItem, type MessageItem } from '../entities/messages';
import { isRetained, retainedFrom, retentionWindow, type RetentionWindow } from '../policies/retention';

export interface HistoryPage {
  limit: number;
  /** Only messages newer than this id (catch-up after a reconnect), oldest first. */
  after?: string;
  /** Only messages older than this id (paging back). */
  before?: string;
}

/**
 * One strongly consistent Query of the owner's partition. The chat's start/end markers sit at both ends
 * of its message range, so an owned chat always returns an item; an empty result means "not yours". The
 * range starts no lower than the bot's retention keeps (out-of-date messages are never read), and what is
 * past its own ttl (dated by an earlier setting) is left out.
 */
export async function listMessages(userId: string, chatId: string, page: HistoryPage, w: RetentionWindow = retentionWindow({})): Promise<MessageItem[]> {
  const prefix = keys.messagePrefix(chatId);
  const kept = retainedFrom(chatId, w);
  const after = page.after ? prefix + page.after : undefined;
  const low = [after, kept].reduce<string>((a, b) => (b !== undefined && b > a ? b : a), keys.chatStart(userId, chatId).sk);
  const high = page.before ? prefix + page.before : keys.chatEnd(userId, chatId).sk;
  // Both ends bounded (by ids or the retention), the markers are outside: an empty page asks whose chat it is.
  const bounded = low !== keys.chatStart(userId, chatId).sk && high !== keys.chatEnd(userId, chatId).sk;
  if (low > high) return (await chatExists(userId, chatId)) ? [] : rejectChatAccess(userId, chatId);
  // Without `after` we want the newest page, so read downwards; with it, upwards from `after`.
  const newestFirst = !page.after;
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
      ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':low': low, ':high': high },
      ScanIndexForward: !newestFirst,
      ConsistentRead: true,
      // The page, a marker, and the bound ids themselves (BETWEEN is inclusive).
      Limit: page.limit + 3,
    }),
  );
  const items = out.Items ?? [];
  if (items.length === 0) {
    // Both ends bounded and nothing between them: the one case the markers cannot answer.
    if (bounded && (await chatExists(userId, chatId))) return [];
    return rejectChatAccess(userId, chatId);
  }
  const messages = items
    .filter((i) => i.entity === 'message')
    .map(messageFromItem)
    .filter((m) => m.id !== page.after && m.id !== page.before && isRetained(m, w))
    .slice(0, page.limit);
  return messages.sort((a, b) => byCodeUnits(a.id, b.id));
}

async function chatExists(userId: string, chatId: string): Promise<boolean> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ProjectionExpression: 'pk', ConsistentRead: true }),
  );
  return Boolean(out.Item);
}

/** Every message of a chat that its bot's retention keeps, oldest first (an export): the Query of its range, page after page. */
export async function allMessages(userId: string, chatId: string, w: RetentionWindow): Promise<MessageItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :low AND :high',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':low': retainedFrom(chatId, w) ?? keys.chatStart(userId, chatId).sk, ':high': keys.chatEnd(userId, chatId).sk },
    ConsistentRead: true,
  });
  return items.filter((i) => i.entity === 'message').map(messageFromItem).filter((m) => isRetained(m, w));
}
