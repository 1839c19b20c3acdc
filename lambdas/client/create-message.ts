// POST /api/client/chats/{chat_id}/messages: a user message → 201 with the Message (replies come by realtime).
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { sendMessage } from '../core/messages';
import { chatIdParam, messageBody } from '../core/params';

export const handler = httpHandler(async (req) => {
  const caller = await authenticate(req);
  const chatId = chatIdParam(req);
  return { status: 201, body: await sendMessage(caller, chatId, messageBody(req), 'user') };
});
