// POST /api/client/files: multipart upload of one file → 201 with id, type, url (presigned), status, metadata.
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { parseUpload } from '../core/multipart';
import { saveUpload, toUploadJson } from '../core/files';
import { consumeRate } from '../core/rate';
import { config } from '../core/config';

export const handler = httpHandler(async (req) => {
  const { userId, botId } = await authenticate(req);
  const upload = await parseUpload(req.header('content-type'), req.rawBody());
  await consumeRate({ name: 'uploads', subject: userId, perMinute: config().limits.uploadsPerMinute });
  const record = await saveUpload(userId, botId, upload);
  return { status: 201, body: await toUploadJson(record) };
});
