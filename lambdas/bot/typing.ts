// POST /api/bot/chats/{chat_id}/typing: the bot or an operator is typing → 200; the user's channel gets
// {type: "action", data: {action: "typing", chat_id, sender}} (at most every 2 s per chat and sender).
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { chatIdParam, typingSender } from '../http/params';
import { startTyping } from '../flows/typing';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const chatId = chatIdParam(req);
  const sender = typingSender(req);
  await startTyping(await botChatOwner(req, bot, chatId, true), chatId, sender);
  return { status: 200, body: { status: 'ok' } };
});
