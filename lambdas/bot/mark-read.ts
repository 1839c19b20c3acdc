// POST /api/bot/chats/{chat_id}/read: the operator has read the chat (resets the bot side's unread count).
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { markChatReadByOperator } from '../flows/chats';
import { chatIdParam } from '../http/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const chatId = chatIdParam(req);
  const { userId } = await botChatOwner(req, bot, chatId);
  await markChatReadByOperator(userId, chatId);
  return { status: 200, body: { status: 'ok' } };
});
