// GET /api/bot/chats: the bot's chats, newest activity first, paged with limit and cursor.
import { httpHandler } from '../http/http';
import { authenticateBot } from '../http/auth';
import { listBotChats } from '../flows/chats';
import { retentionWindow } from '../policies/retention';
import { botChatsPage } from '../http/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const { limit, cursor } = botChatsPage(req);
  return { status: 200, body: await listBotChats(bot.id, limit, cursor, retentionWindow(bot)) };
});
