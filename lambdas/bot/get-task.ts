// GET /api/bot/tasks/{task_id}: a background task of the bot (erase, export) and how far it is.
import { httpHandler } from '../http/http';
import { authenticateBot } from '../http/auth';
import { uuidParam } from '../http/params';
import { botTask, toTaskJson } from '../domain/tasks';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  return { status: 200, body: toTaskJson(await botTask(bot.id, uuidParam(req, 'task_id'))) };
});
