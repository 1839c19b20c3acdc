// POST /api/client/chats: creates a chat for the caller → 201 with the chat.
import * as v from 'valibot';
import { httpHandler } from '../core/http';
import { authenticate } from '../core/auth';
import { createChat } from '../core/chats';
import { httpUrl, jsonObject, parse, text } from '../core/validate';
import { LIMITS } from '../core/limits';

const Body = v.object({
  name: v.pipe(text(1, LIMITS.nameLength), v.check((s) => s.trim().length > 0, 'must not be blank')),
  additional_info: v.optional(jsonObject(LIMITS.additionalInfoBytes)),
  image_url: v.optional(v.nullable(httpUrl)),
});

export const handler = httpHandler(async (req) => {
  const caller = await authenticate(req);
  const body = parse(Body, req.json());
  return { status: 201, body: await createChat(caller, body) };
});
