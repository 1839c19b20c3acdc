// GET /api/client/files/{file_id}: one of the caller's files with its status (a URL once uploaded); any other is 404.
import { httpHandler } from '../http/http';
import { authenticateReader } from '../http/auth';
import { fileIdParam } from '../http/params';
import { getUserFile } from '../flows/uploads';
import { toUploadJson } from '../entities/files';
import { NotFoundError } from '../shared/errors';
import { retentionWindow } from '../policies/retention';

export const handler = httpHandler(async (req) => {
  const { userId, bot } = await authenticateReader(req);
  const file = await getUserFile(userId, fileIdParam(req), retentionWindow(bot));
  if (!file) throw new NotFoundError('File not found');
  return { status: 200, body: await toUploadJson(file) };
});
