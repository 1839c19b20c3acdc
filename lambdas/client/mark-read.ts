// POST /api/client/chats/{chat_id}/read: resets the chat's unread counter → {"status":"ok"}.
import { httpHandler } from '../http/http';
import { authenticate } from '../http/auth';
import { markChatRead } from '../domain/chats';
import { chatIdParam } from '../http/params';

export const handler = httpHandler(async (req) => {
  const { userId } = await authenticate(req);
  await markChatRead(userId, chatIdParam(req));
  return { status: 200, body: { status: 'ok' } };
});
