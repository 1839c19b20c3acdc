// GET /api/bot/users?external_id=…: the bot's user with that external id → 200 the User; 404 when none.
import { scoped } from '../http/scoped';
import { externalIdQuery } from '../http/params';
import { findUser } from '../entities/users';

export const handler = scoped('bot', { input: externalIdQuery }, async ({ botId }, externalId) => ({ status: 200, body: await findUser(botId, externalId) }));
