// POST /api/client/chats: creates a chat for the caller → 201 with the chat.
import { httpHandler } from '../http/http';
import { authenticate } from '../http/auth';
import { createChat } from '../flows/chats';
import { parse } from '../http/validate';
import { ChatBody } from '../http/params';

export const handler = httpHandler(async (req) => {
  const caller = await authenticate(req);
  const body = parse(ChatBody, req.json());
  return { status: 201, body: await createChat(caller, body) };
});
