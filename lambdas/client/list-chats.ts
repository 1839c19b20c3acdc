// GET /api/client/chats: the caller's chats, newest activity first.
import { httpHandler } from '../http/http';
import { authenticateReader } from '../http/auth';
import { listChats } from '../flows/chats';
import { retentionWindow } from '../policies/retention';

export const handler = httpHandler(async (req) => {
  const { userId, bot } = await authenticateReader(req);
  return { status: 200, body: await listChats(userId, retentionWindow(bot)) };
});
