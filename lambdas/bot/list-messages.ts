// GET /api/bot/chats/{chat_id}/messages: a chat's history, same shape and paging as the client's.
import { scoped } from '../http/scoped';
import { listMessages } from '../flows/history';
import { toMessage } from '../entities/messages';
import { historyPage } from '../http/params';

export const handler = scoped('bot-chat:read', { input: historyPage }, async ({ owner, chatId, window }, page) => {
  const items = await listMessages(owner.userId, chatId, page, window);
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
