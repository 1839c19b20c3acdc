// GET /api/bot/users?external_id=…: the bot's user with that external id → 200 the User; 404 when none.
import { httpHandler } from '../http/http';
import { authenticateBot } from '../http/auth';
import { externalIdQuery } from '../http/params';
import { findUser } from '../entities/users';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  return { status: 200, body: await findUser(bot.id, externalIdQuery(req)) };
});
