// GET /api/client/chats/{chat_id}/messages: a page of history (limit, before, after), oldest first.
import { scoped } from '../http/scoped';
import { listMessages } from '../flows/history';
import { toMessage } from '../entities/messages';
import { historyPage } from '../http/params';

export const handler = scoped('session-chat:read', { input: historyPage }, async ({ userId, chatId, window }, page) => {
  const items = await listMessages(userId, chatId, page, window);
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
