// POST /api/bot/users/{user_id}/export: export the user's data → 202 with the task; once completed, the task's
// download_url is a presigned GET (1 hour) of an NDJSON file, kept a day (flows/export.ts).
import { scoped } from '../http/scoped';
import { uuidParam } from '../http/params';
import { startExport } from '../flows/export';
import { toTaskJson } from '../entities/tasks';

export const handler = scoped('bot', { input: (req) => uuidParam(req, 'user_id') }, async ({ botId }, userId, req) => {
  req.logKeys.user_id = userId;
  return { status: 202, body: toTaskJson(await startExport(botId, userId)) };
});
