// POST /api/client/files: multipart upload of one file → 201 with id, type, url (presigned), status, metadata.
import { scoped } from '../http/scoped';
import { parseUpload } from '../http/multipart';
import { saveUpload, toUploadJson } from '../entities/files';
import { withUploadAllowance } from '../policies/storage-quota';

export const handler = scoped('session:create', { input: (req) => parseUpload(req.header('content-type'), req.rawBody()) }, async ({ userId, botId }, upload) => {
  // The uploads rate and the storage quota (given back if the store fails).
  const record = await withUploadAllowance(userId, upload.bytes.length, (counted) => saveUpload(userId, botId, upload, { counted }));
  return { status: 201, body: await toUploadJson(record) };
});
