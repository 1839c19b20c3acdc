// PATCH /api/bot/chats/{chat_id}/messages/{message_id}: the bot side edits its own message (a streamed answer)
// → 200 with the Message (same id and created_at, new content, is_edited); the user gets the new version.
import { scoped } from '../http/scoped';
import { editMessage } from '../flows/edit';
import { editBody, messageIdParam } from '../http/params';

export const handler = scoped('bot-chat:update', { input: (req) => ({ messageId: messageIdParam(req), edit: editBody(req) }) }, async (scope, { messageId, edit }) => ({
  status: 200,
  body: await editMessage(scope.owner, scope.chatId, messageId, edit, scope.window),
}));
