// GET /api/bot/tasks/{task_id}: a background task of the bot (erase, export) and how far it is; a completed
// export's download_url.
import { httpHandler } from '../http/http';
import { authenticateBot } from '../http/auth';
import { uuidParam } from '../http/params';
import { botTask, toTaskJson } from '../entities/tasks';
import { downloadUrl } from '../flows/export';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const task = await botTask(bot.id, uuidParam(req, 'task_id'));
  // A completed export, while it lasts: a download URL made now (presigned, no call).
  return { status: 200, body: toTaskJson(task, await downloadUrl(task)) };
});
