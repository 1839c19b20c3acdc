// POST /api/bot/files/uploads: a direct upload for one chat (JSON with `chat_id`) → 201 as the client's.
import { httpHandler } from '../http/http';
import { authenticateBot, botChatOwner } from '../http/auth';
import { botUploadBody } from '../http/params';
import { checkUpload, createUpload, toTicketJson } from '../flows/uploads';

export const handler = httpHandler(async (req) => {
  const bot = await authenticateBot(req);
  const { chatId, upload } = botUploadBody(req);
  checkUpload(upload);
  // Stored as the chat user's file, so it can be attached to that chat's messages.
  const { userId } = await botChatOwner(req, bot, chatId, true);
  return { status: 201, body: await toTicketJson(await createUpload(userId, bot.id, upload)) };
});
