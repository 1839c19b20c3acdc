// GET /api/bot/tasks/{task_id}: a background task of the bot (erase, export) and how far it is; a completed
// export's download_url.
import { scoped } from '../http/scoped';
import { uuidParam } from '../http/params';
import { botTask, toTaskJson } from '../entities/tasks';
import { downloadUrl } from '../flows/export';

export const handler = scoped('bot', { input: (req) => uuidParam(req, 'task_id') }, async ({ botId }, taskId) => {
  const task = await botTask(botId, taskId);
  // A completed export, while it lasts: a download URL made now (presigned, no call).
  return { status: 200, body: toTaskJson(task, await downloadUrl(task)) };
});
