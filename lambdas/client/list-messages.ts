// GET /api/client/chats/{chat_id}/messages: a page of history (limit, before, after), oldest first.
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { listMessages, toMessage } from '../core/messages';
import { chatIdParam, historyPage } from '../core/params';

export const handler = httpHandler(async (req) => {
  const { userId } = await authenticate(req);
  const items = await listMessages(userId, chatIdParam(req), historyPage(req));
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
