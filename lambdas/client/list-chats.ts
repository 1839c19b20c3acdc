// GET /api/client/chats: the caller's chats, newest activity first.
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { listChats } from '../core/chats';

export const handler = httpHandler(async (req) => {
  const { userId } = await authenticate(req);
  return { status: 200, body: await listChats(userId) };
});
