// POST /api/client/chats: creates a chat for the caller → 201 with the chat.
import { scoped } from '../http/scoped';
import { createChat } from '../flows/chats';
import { parse } from '../http/validate';
import { ChatBody } from '../http/params';

export const handler = scoped('session:create', { input: (req) => parse(ChatBody, req.json()) }, async (scope, body) => ({
  status: 201,
  body: await createChat(scope.owner, body),
}));
