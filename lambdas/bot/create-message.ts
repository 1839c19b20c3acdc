// POST /api/bot/chats/{chat_id}/messages: a bot or operator reply → 201; the user gets it over realtime.
import { scoped } from '../http/scoped';
import { sendMessage } from '../flows/send';
import { botSender } from '../http/params';
import { botMessageBody } from '../http/interactive';

export const handler = scoped('bot-chat:create', { input: (req) => ({ body: botMessageBody(req), sender: botSender(req) }) }, async (scope, { body, sender }) => {
  const { message, created } = await sendMessage(scope, body, sender);
  return { status: created ? 201 : 200, body: message };
});
