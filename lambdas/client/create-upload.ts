// POST /api/client/files/uploads: a direct upload (up to MAX_UPLOAD_BYTES) → 201 with the pending file, the
// presigned POST the browser sends its bytes with, and when that POST expires.
import { scoped } from '../http/scoped';
import { uploadBody } from '../http/params';
import { checkUpload, createUpload, toTicketJson } from '../flows/uploads';
import { withUploadAllowance } from '../policies/storage-quota';

export const handler = scoped('session:create', { input: uploadBody }, async ({ userId, botId }, input) => {
  // A refused declaration costs no upload of the minute's allowance, nor any of the storage quota.
  checkUpload(input);
  const ticket = await withUploadAllowance(userId, input.size, (counted) => createUpload(userId, botId, input, { counted }));
  return { status: 201, body: await toTicketJson(ticket) };
});
