// POST /api/client/chats/{chat_id}/read: resets the chat's unread counter → {"status":"ok"}.
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { markChatRead } from '../core/chats';
import { chatIdParam } from '../core/params';

export const handler = httpHandler(async (req) => {
  const { userId } = await authenticate(req);
  await markChatRead(userId, chatIdParam(req));
  return { status: 200, body: { status: 'ok' } };
});
