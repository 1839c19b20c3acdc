// POST /api/bot/files: multipart `file` + `chat_id` (+ optional `type`): a file the bot then attaches by id.
import { scoped } from '../http/scoped';
import { InvalidInputError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import { parseUpload } from '../http/multipart';
import { saveUpload, toUploadJson } from '../entities/files';

const input = async (req: { header(name: string): string | undefined; rawBody(): Buffer }) => {
  const upload = await parseUpload(req.header('content-type'), req.rawBody());
  if (!isUuid(upload.fields.chat_id)) throw new InvalidInputError('chat_id: a form field with the chat id (UUID) is required');
  return upload;
};

// Stored as the chat user's file, so it can be attached to that chat's messages (not in the user's storage quota).
export const handler = scoped('bot-chat:create', { input, chatId: (upload) => upload.fields.chat_id }, async ({ owner, botId }, upload) => ({
  status: 201,
  body: await toUploadJson(await saveUpload(owner.userId, botId, upload)),
}));
