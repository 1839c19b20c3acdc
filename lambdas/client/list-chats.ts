// GET /api/client/chats: the caller's chats, newest activity first.
import { httpHandler } from '../http/http';
import { authenticate } from '../http/auth';
import { listChats } from '../domain/chats';

export const handler = httpHandler(async (req) => {
  const { userId } = await authenticate(req);
  return { status: 200, body: await listChats(userId) };
});
