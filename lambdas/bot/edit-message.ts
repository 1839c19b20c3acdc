// PATCH /api/bot/chats/{chat_id}/messages/{message_id}: the bot side edits its own message (a streamed answer)
// → 200 with the Message (same id and created_at, new content, is_edited); the user gets the new version.
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { editMessage } from '../flows/edit';
import { retentionWindow } from '../policies/retention';
import { chatIdParam, editBody, messageIdParam } from '../http/params';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const chatId = chatIdParam(req);
  const messageId = messageIdParam(req);
  const edit = editBody(req);
  return { status: 200, body: await editMessage(await botChatOwner(req, bot, chatId), chatId, messageId, edit, retentionWindow(bot)) };
});
