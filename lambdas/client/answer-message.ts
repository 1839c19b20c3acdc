// POST /api/client/chats/{chat_id}/messages/{message_id}/response: the visitor answers an interactive message → 200 with the Message.
import { scoped } from '../http/scoped';
import { answerMessage } from '../flows/answer';
import { messageIdParam } from '../http/params';
import { answerBody } from '../http/answer';

export const handler = scoped('session-chat:update', { input: (req) => ({ messageId: messageIdParam(req), answer: answerBody(req) }) }, async (scope, { messageId, answer }) => ({
  status: 200,
  body: await answerMessage(scope.owner, scope.chatId, messageId, answer, scope.window),
}));
