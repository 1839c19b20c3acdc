// POST /api/bot/chats/{chat_id}/typing: the bot or an operator is typing → 200; the user's channel gets
// {type: "action", data: {action: "typing", chat_id, sender}} (at most every 2 s per chat and sender).
import { scoped } from '../http/scoped';
import { typingSender } from '../http/params';
import { startTyping } from '../flows/typing';

export const handler = scoped('bot-chat:create', { input: typingSender }, async ({ owner, chatId }, sender) => {
  await startTyping(owner, chatId, sender);
  return { status: 200, body: { status: 'ok' } };
});
