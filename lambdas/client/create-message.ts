// POST /api/client/chats/{chat_id}/messages: a user message → 201 with the Message (replies come by realtime).
import { httpHandler } from '../http/http';
import { authenticateSender } from '../http/auth';
import { sendMessage } from '../flows/send';
import { chatIdParam, messageBody } from '../http/params';

export const handler = httpHandler(async (req) => {
  const caller = await authenticateSender(req);
  const chatId = chatIdParam(req);
  // Whether the bot has a webhook comes from its cached settings: the flag spares the webhook dispatcher
  // every message of bots without one.
  const { message, created } = await sendMessage(caller, chatId, messageBody(req), 'user', { webhook: Boolean(caller.bot.webhook_url), bot: caller.bot });
  // 201 for a new message; 200 with the first message when an idempotency key replays a send.
  return { status: created ? 201 : 200, body: message };
});
