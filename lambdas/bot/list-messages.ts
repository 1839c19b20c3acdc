// GET /api/bot/chats/{chat_id}/messages: a chat's history, same shape and paging as the client's.
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { listMessages } from '../flows/history';
import { retentionWindow } from '../policies/retention';
import { toMessage } from '../entities/messages';
import { chatIdParam, historyPage } from '../http/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const chatId = chatIdParam(req);
  const page = historyPage(req);
  const owner = await botChatOwner(req, bot, chatId);
  const items = await listMessages(owner.userId, chatId, page, retentionWindow(bot));
  return { status: 200, body: await Promise.all(items.map(toMessage)) };
});
