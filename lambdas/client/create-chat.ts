// POST /api/client/chats: creates a chat for the caller → 201 with the chat.
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { createChat } from '../core/chats';
import { parse } from '../core/validate';
import { ChatBody } from '../core/params';

export const handler = httpHandler(async (req) => {
  const caller = await authenticate(req);
  const body = parse(ChatBody, req.json());
  return { status: 201, body: await createChat(caller, body) };
});
