// A chat's history: one strongly consistent Query of the owner's partition per page.
import { byCodeUnits } from '../shared/ids';
import { chatExists, rejectChatAccess } from '../entities/chats';
import { keys } from '../entities/keys';
import { chatMessagesFrom, messagesInRange, type MessageItem } from '../entities/messages';
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
  // The page, a marker, and the bound ids themselves (BETWEEN is inclusive).
  const { found, messages: read } = await messagesInRange(userId, { low, high, newestFirst: !page.after, limit: page.limit + 3 });
  if (!found) {
    // Both ends bounded and nothing between them: the one case the markers cannot answer.
    if (bounded && (await chatExists(userId, chatId))) return [];
    return rejectChatAccess(userId, chatId);
  }
  const messages = read
    .filter((m) => m.id !== page.after && m.id !== page.before && isRetained(m, w))
    .slice(0, page.limit);
  return messages.sort((a, b) => byCodeUnits(a.id, b.id));
}

/** Every message of a chat that its bot's retention keeps, oldest first (an export): the Query of its range, page after page. */
export async function allMessages(userId: string, chatId: string, w: RetentionWindow): Promise<MessageItem[]> {
  const messages = await chatMessagesFrom(userId, chatId, retainedFrom(chatId, w) ?? keys.chatStart(userId, chatId).sk);
  return messages.filter((m) => isRetained(m, w));
}
