// GET /api/bot/chats: the bot's chats, newest activity first, paged with limit and cursor.
import { httpHandler } from '../core/http';
import { authenticateBot } from '../core/auth';
import { listBotChats } from '../core/chats';
import { botChatsPage } from '../core/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const { limit, cursor } = botChatsPage(req);
  return { status: 200, body: await listBotChats(bot.id, limit, cursor) };
});
