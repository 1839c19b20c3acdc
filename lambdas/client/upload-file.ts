// POST /api/client/files: multipart upload of one file → 201 with id, type, url (presigned), status, metadata.
import { httpHandler } from '../http/http';
import { authenticate } from '../http/auth';
import { parseUpload } from '../http/multipart';
import { saveUpload, toUploadJson } from '../domain/files';
import { consumeRate } from '../domain/rate';
import { config } from '../shared/config';

export const handler = httpHandler(async (req) => {
  const { userId, botId, bot } = await authenticate(req);
  const upload = await parseUpload(req.header('content-type'), req.rawBody());
  await consumeRate({ name: 'uploads', subject: userId, perMinute: config().limits.uploadsPerMinute });
  const record = await saveUpload(userId, botId, upload, bot);
  return { status: 201, body: await toUploadJson(record) };
});
