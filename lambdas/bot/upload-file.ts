// POST /api/bot/files: multipart `file` + `chat_id` (+ optional `type`): a file the bot then attaches by id.
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { InvalidInputError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import { parseUpload } from '../http/multipart';
import { saveUpload, toUploadJson } from '../entities/files';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const upload = await parseUpload(req.header('content-type'), req.rawBody());
  const chatId = upload.fields.chat_id;
  if (!isUuid(chatId)) throw new InvalidInputError('chat_id: a form field with the chat id (UUID) is required');
  // Stored as the chat user's file, so it can be attached to that chat's messages (not in the user's storage quota).
  const { userId } = await botChatOwner(req, bot, chatId, true);
  const record = await saveUpload(userId, bot.id, upload);
  return { status: 201, body: await toUploadJson(record) };
});
