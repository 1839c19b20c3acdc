// POST /api/client/chats/{chat_id}/messages: a user message → 201 with the Message (replies come by realtime).
import { scoped } from '../http/scoped';
import { sendMessage } from '../flows/send';
import { messageBody } from '../http/params';

export const handler = scoped('session-chat:create', { input: messageBody }, async (scope, body) => {
  const { message, created } = await sendMessage(scope, body, 'user');
  // 201 for a new message; 200 with the first message when an idempotency key replays a send.
  return { status: created ? 201 : 200, body: message };
});
