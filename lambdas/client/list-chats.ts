// GET /api/client/chats: the caller's chats, newest activity first.
import { scoped } from '../http/scoped';
import { listChats } from '../flows/chats';

export const handler = scoped('session:read', async ({ userId, window }) => ({ status: 200, body: await listChats(userId, window) }));
