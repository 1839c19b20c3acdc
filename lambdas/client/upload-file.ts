// POST /api/client/files: multipart upload of one file → 201 with id, type, url (presigned), status, metadata.
import { httpHandler } from '../http/http';
import { authenticate } from '../http/auth';
import { parseUpload } from '../http/multipart';
import { saveUpload, toUploadJson } from '../entities/files';
import { withUploadAllowance } from '../policies/storage-quota';

export const handler = httpHandler(async (req) => {
  const { userId, botId } = await authenticate(req);
  const upload = await parseUpload(req.header('content-type'), req.rawBody());
  // The uploads rate and the storage quota (given back if the store fails).
  const record = await withUploadAllowance(userId, upload.bytes.length, (counted) => saveUpload(userId, botId, upload, { counted }));
  return { status: 201, body: await toUploadJson(record) };
});
