// GET /api/client/files/{file_id}: one of the caller's files with its status (a URL once uploaded); any other is 404.
import { scoped } from '../http/scoped';
import { fileIdParam } from '../http/params';
import { getUserFile } from '../flows/uploads';
import { toUploadJson } from '../entities/files';
import { NotFoundError } from '../shared/errors';

export const handler = scoped('session:read', { input: fileIdParam }, async ({ userId, window }, fileId) => {
  const file = await getUserFile(userId, fileId, window);
  if (!file) throw new NotFoundError('File not found');
  return { status: 200, body: await toUploadJson(file) };
});
