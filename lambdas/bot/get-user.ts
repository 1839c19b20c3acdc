// GET /api/bot/users/{user_id}: the bot's user → 200 the User; another bot's user, or none, is a 404.
import { scoped } from '../http/scoped';
import { uuidParam } from '../http/params';
import { getUser } from '../entities/users';

export const handler = scoped('bot', { input: (req) => uuidParam(req, 'user_id') }, async ({ botId }, userId) => ({ status: 200, body: await getUser(botId, userId) }));
