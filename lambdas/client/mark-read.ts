// POST /api/client/chats/{chat_id}/read: resets the chat's unread counter → {"status":"ok"}.
import { scoped } from '../http/scoped';
import { markChatRead } from '../flows/chats';

export const handler = scoped('session-chat:update', async (scope) => {
  await markChatRead(scope);
  return { status: 200, body: { status: 'ok' } };
});
