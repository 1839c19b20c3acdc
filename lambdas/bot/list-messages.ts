// GET /api/bot/chats/{chat_id}/messages: a chat's history, same shape and paging as the client's.
import { httpHandler } from '../core/http';
import { authenticateBot, botChatOwner } from '../core/auth';
import { listMessages, toMessage } from '../core/messages';
import { chatIdParam, historyPage } from '../core/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const chatId = chatIdParam(req);
  const page = historyPage(req);
  const owner = await botChatOwner(req, bot, chatId);
  const items = await listMessages(owner.userId, chatId, page);
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
