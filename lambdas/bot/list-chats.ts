// GET /api/bot/chats: the bot's chats, newest activity first, paged with limit and cursor.
import { scoped } from '../http/scoped';
import { listBotChats } from '../flows/chats';
import { botChatsPage } from '../http/params';

export const handler = scoped('bot', { input: botChatsPage }, async ({ botId, window }, { limit, cursor }) => ({
  status: 200,
  body: await listBotChats(botId, limit, cursor, window),
}));
