// GET /api/client/chats/{chat_id}/messages: a page of history (limit, before, after), oldest first.
import { httpHandler } from '../http/http';
import { authenticateReader } from '../http/auth';
import { listMessages } from '../domain/history';
import { toMessage } from '../domain/messages';
import { chatIdParam, historyPage } from '../http/params';

export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateReader(req);
  const items = await listMessages(userId, chatIdParam(req), historyPage(req));
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
