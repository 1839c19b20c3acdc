// POST /api/bot/files/uploads: a direct upload for one chat (JSON with `chat_id`) → 201 as the client's.
import { scoped } from '../http/scoped';
import { botUploadBody } from '../http/params';
import { checkUpload, createUpload, toTicketJson } from '../flows/uploads';

const input = (req: Parameters<typeof botUploadBody>[0]) => {
  const body = botUploadBody(req);
  checkUpload(body.upload); // a bad declaration is a 400 before the chat is looked at
  return body;
};

// Stored as the chat user's file, so it can be attached to that chat's messages.
export const handler = scoped('bot-chat:create', { input, chatId: (i) => i.chatId }, async ({ owner, botId }, { upload }) => ({
  status: 201,
  body: await toTicketJson(await createUpload(owner.userId, botId, upload)),
}));
