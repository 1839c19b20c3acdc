// POST /api/client/chats/{chat_id}/messages: a user message → 201 with the Message (replies come by realtime).
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { createMessage, toMessage } from '../core/messages';
import { getOwnedFiles, toStoredFile } from '../core/files';
import { chatIdParam, messageBody } from '../core/params';

export const handler = httpHandler(async (req) => {
  const { userId, botId } = await authenticate(req);
  const chatId = chatIdParam(req);
  const body = messageBody(req);
  const uploaded = (await getOwnedFiles(userId, body.files)).map(toStoredFile);
  const item = await createMessage({
    userId,
    botId,
    chatId,
    content: body.content,
    content_type: body.content_type,
    files: [...uploaded, ...body.complete_files],
    sender: 'user',
  });
  return { status: 201, body: await toMessage(item) };
});
