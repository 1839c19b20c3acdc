// GET /api/bot/users/{user_id}: the bot's user → 200 the User; another bot's user, or none, is a 404.
import { httpHandler } from '../http/http';
import { authenticateBot } from '../http/auth';
import { uuidParam } from '../http/params';
import { getUser } from '../entities/users';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  return { status: 200, body: await getUser(bot.id, uuidParam(req, 'user_id')) };
});
