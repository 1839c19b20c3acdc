// POST /api/client/chats/{chat_id}/read: resets the chat's unread counter → {"status":"ok"}.
import { httpHandler } from '../http/http';
import { authenticateSender } from '../http/auth';
import { markChatRead } from '../flows/chats';
import { chatIdParam } from '../http/params';

export const handler = httpHandler(async (req) => {
  // The erasure check rides in the read's own chat read (flows/chats.ts markChatRead).
  const { userId } = await authenticateSender(req);
  await markChatRead(userId, chatIdParam(req));
  return { status: 200, body: { status: 'ok' } };
});
