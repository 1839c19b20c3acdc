// DELETE /api/bot/users/{user_id}: erase the user → 202 with the task. At once the user's tokens are refused
// and its sockets closed; the task worker deletes the rest (flows/erase.ts). Repeating it is harmless.
import { scoped } from '../http/scoped';
import { uuidParam } from '../http/params';
import { startErase } from '../flows/erase';
import { toTaskJson } from '../entities/tasks';
import { closeUserConnections } from '../centrifuge/hub';

export const handler = scoped('bot', { input: (req) => uuidParam(req, 'user_id') }, async ({ botId }, userId, req) => {
  req.logKeys.user_id = userId;
  const task = await startErase(botId, userId);
  await closeUserConnections(userId);
  return { status: 202, body: toTaskJson(task) };
});
