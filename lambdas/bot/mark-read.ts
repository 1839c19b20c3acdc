// POST /api/bot/chats/{chat_id}/read: the operator has read the chat (resets the bot side's unread count).
import { scoped } from '../http/scoped';
import { markChatReadByOperator } from '../flows/chats';

export const handler = scoped('bot-chat:update', async ({ owner, chatId }) => {
  await markChatReadByOperator(owner.userId, chatId);
  return { status: 200, body: { status: 'ok' } };
});
