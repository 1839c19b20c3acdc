// The chats of a user and of a bot: a chat made (with its guards in one transaction), the lists with their unread
// counters as the bot's retention leaves them, and each side's read.
import { ConflictError, NotFoundError } from '../shared/errors';
import { config } from '../shared/config';
import { transactWrite } from '../aws/transact';
import { byCodeUnits, newUuid } from '../shared/ids';
import { chatCountedSeq, chatCountWrite, newChatWrites, rejectChatAccess, toChat, userChats, type BotChatPage, type Chat, type ChatItem, type ChatOwner, type NewChat } from '../entities/chats';
import { usersByExternalId } from '../entities/users';
import { decodeCursor, encodeCursor } from '../entities/chat-cursor';
import { botChatsPage, listLayout } from '../entities/chat-list';
import { resetUnread } from '../entities/chat-activity';
import { rateLimited, rateUpdate, type RateLimit } from '../policies/rate';
import { retainedUnread, retentionWindow, type RetentionWindow } from '../policies/retention';

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
  const { chatsPerUser, chatsPerMinute } = config().limits;
  const rate: RateLimit = { name: 'chats', subject: userId, perMinute: chatsPerMinute };
  const rateItem = rateUpdate(rate);
  const items = newChatWrites({ userId, botId, externalId }, chat);
  // Guards ride in the same transaction: the user's chat count, then this minute's creation count.
  const countAt = chatsPerUser > 0 ? items.length : -2;
  if (chatsPerUser > 0) {
    items.push(chatCountWrite(userId, chatsPerUser));
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
 * counters as the bot's retention leaves them (policies/retention.ts).
 */
export async function listChats(userId: string, w: RetentionWindow = retentionWindow({})): Promise<Chat[]> {
  const items = await userChats(userId);
  const chats = await Promise.all(items.map(async (item) => ({ ...toChat(item), unread_msg_by_user: await retainedUnread(item, 'user', w) })));
  return chats.sort((a, b) => byCodeUnits(b.updated_at, a.updated_at) || byCodeUnits(b.id, a.id));
}

/** The user's read (POST …/read) of its own chat, as its scope read it (ownChat): the reset (entities/chat-activity.ts resetUnread). */
export async function markChatRead({ userId, chatId, chat }: { userId: string; chatId: string; chat: ChatItem }): Promise<void> {
  if (!(await resetUnread(userId, chatId, 'user', chat.counted_seq))) await rejectChatAccess(userId, chatId);
}

/** The bot side's read: the operator has seen the user's messages (no event for the user). */
export async function markChatReadByOperator(userId: string, chatId: string): Promise<void> {
  const chat = await chatCountedSeq(userId, chatId);
  if (!chat || !(await resetUnread(userId, chatId, 'operator', chat.counted_seq))) throw new NotFoundError('Chat not found');
}

/**
 * The bot's chats, newest activity first, one page (entities/chat-list.ts: every shard at once, then the page's
 * chats); each with its user (one BatchGet for the page) and its unread counters as the bot's retention leaves them.
 */
export async function listBotChats(botId: string, limit: number, cursor?: string, w: RetentionWindow = retentionWindow({})): Promise<BotChatPage> {
  const before = cursor ? decodeCursor(cursor, botId) : undefined;
  const { chats: items, last } = await botChatsPage(botId, limit, before, await listLayout());
  const users = await usersByExternalId(botId, [...new Set(items.flatMap((i) => (i.external_id ? [i.external_id] : [])))]);
  const chats = await Promise.all(
    items.map(async (item) => {
      const user = item.external_id ? users.get(item.external_id) : undefined;
      const [byUser, byOperator] = await Promise.all([retainedUnread(item, 'user', w), retainedUnread(item, 'operator', w)]);
      return {
        ...toChat(item),
        unread_msg_by_user: byUser,
        unread_count: byOperator,
        user: { id: item.user_id, external_id: item.external_id ?? null, first_name: user?.first_name ?? '', last_name: user?.last_name ?? '' },
      };
    }),
  );
  return { chats, next_cursor: encodeCursor(botId, last) };
}
