// GET /api/client/chats/{chat_id}/messages: a page of history (limit, before, after), oldest first.
import { httpHandler } from '../http/http';
import { authenticateReader } from '../http/auth';
import { listMessages } from '../flows/history';
import { retentionWindow } from '../policies/retention';
import { toMessage } from '../entities/messages';
import { chatIdParam, historyPage } from '../http/params';

export const handler = httpHandler(async (req) => {
  const { userId, bot } = await authenticateReader(req);
  const items = await listMessages(userId, chatIdParam(req), historyPage(req), retentionWindow(bot));
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
