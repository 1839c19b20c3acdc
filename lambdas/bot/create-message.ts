// POST /api/bot/chats/{chat_id}/messages: a bot or operator reply → 201; the user gets it over realtime.
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { sendMessage } from '../flows/send';
import { botSender, chatIdParam, messageBody } from '../http/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const chatId = chatIdParam(req);
  const body = messageBody(req);
  const sender = botSender(req);
  // With unread reminders on, the reply is marked for the webhook dispatcher's stream filter (it schedules them).
  const remind = Boolean(bot.webhook_url && bot.unread_reminder_seconds);
  const { message, created } = await sendMessage(await botChatOwner(req, bot, chatId, true), chatId, body, sender, { webhook: remind, bot });
  return { status: created ? 201 : 200, body: message };
});
