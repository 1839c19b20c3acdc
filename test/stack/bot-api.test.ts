// The Bot API with the bot's secret key, as a bot or an operator console uses it: the chat list with its users
// and unread counts, a chat's history, replies the user sees, operator read, and its errors.
import { until } from '../support/realtime';
import { firstFileUrl, present, type BotChatPage, type Message, type Schemas } from '../support/contract';
import type { Reply } from '../support/http';
import { botApi, client, ext, say, T, userWithChat } from './client';

type BotChat = Schemas['BotChat'];

/** The bot's chat list is read from an index updated within about a second: page until `chatId` shows `want`. */
async function botChat(chatId: string, want: (c: BotChat) => boolean = () => true): Promise<BotChat> {
  let found: BotChat | undefined;
  await until(
    async () => {
      let cursor: string | null = null;
      for (let page = 0; page < 5; page++) {
        // Typed here: the cursor it sets is part of its own request, which TypeScript cannot infer through.
        const res: Reply<BotChatPage> = await botApi('GET', `/chats?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        expect(res.status).toBe(200);
        found = res.body.chats.find((c) => c.id === chatId);
        cursor = res.body.next_cursor;
        if (found || !cursor) break;
      }
      return Boolean(found && want(found));
    },
    T.patienceMs,
    `chat ${chatId} in the Bot API's list`,
  );
  return present(found, `chat ${chatId} in the Bot API's list`);
}

test('list chats: the user’s chat with its user and unread count; list messages; reply; operator read', async () => {
  const { session, token, chatId } = await userWithChat('shopper');
  const asks: Message[] = [];
  for (const content of ['Where is my order?', 'It is #1042']) asks.push((await say(token, chatId, content)).body);

  const listed = await botChat(chatId, (c) => c.unread_count === 2);
  expect(listed).toMatchObject({
    id: chatId,
    name: 'Support',
    unread_msg_by_user: 0,
    unread_count: 2,
    user: { id: session.user.id, external_id: ext('shopper'), first_name: '', last_name: '' },
  });

  const history = await botApi('GET', `/chats/${chatId}/messages`);
  expect(history.status).toBe(200);
  expect(history.body).toEqual(asks);

  const reply = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'It ships today.' } });
  expect(reply.status).toBe(201);
  expect(reply.body).toMatchObject({ chat_id: chatId, content: 'It ships today.', content_type: 'text', sender_type: 'outcoming', sender: 'bot', files: null, is_edited: false });
  const seenByUser = await client('GET', `/chats/${chatId}/messages`, { token });
  expect(seenByUser.body.map((m) => m.id)).toEqual([...asks.map((m) => m.id), reply.body.id]);
  // The chat counts the reply as the stream publishes it (a moment after the 201).
  const count = async () => (await client('GET', '/chats', { token })).body[0].unread_msg_by_user;
  await until(async () => (await count()) === 1, T.patienceMs, 'the reply counted');

  expect(await botApi('POST', `/chats/${chatId}/read`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  expect((await botChat(chatId, (c) => c.unread_count === 0)).unread_count).toBe(0);
  // The operator's read does not mark the chat read for the user.
  expect((await client('GET', '/chats', { token })).body[0].unread_msg_by_user).toBe(1);
});

test('a bot upload sent as a photo reply reaches the user with a working URL', async () => {
  const { token, chatId } = await userWithChat('photo-reply');
  const fd = new FormData();
  fd.append('chat_id', chatId);
  fd.append('file', new Blob([Buffer.from(`BOTPNG ${T.prefix}`)], { type: 'image/png' }), 'reply.png');
  const up = await botApi('POST', '/files', { body: fd });
  expect(up.status).toBe(201);
  expect(up.body).toMatchObject({ type: 'photo', name: 'reply.png' });
  const msg = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: '', content_type: 'photo', files: [up.body.id] } });
  expect(msg.status).toBe(201);
  const history = await client('GET', `/chats/${chatId}/messages`, { token });
  const url = firstFileUrl(present(history.body.find((m) => m.id === msg.body.id), 'the reply in the history'));
  expect(await (await fetch(url)).text()).toBe(`BOTPNG ${T.prefix}`);
});

test('Bot API errors: a wrong or missing secret key → 401, a session token is no bot key, an unknown chat → 404', async () => {
  const { token, chatId } = await userWithChat('bot-errors');
  const wrong = T.secretKey.slice(0, -1) + (T.secretKey.endsWith('0') ? '1' : '0');
  for (const secret of [wrong, token, T.clientKey, '']) {
    const res = await botApi('GET', '/chats', {}, secret);
    expect({ secret: secret.slice(0, 6), status: res.status }).toEqual({ secret: secret.slice(0, 6), status: 401 });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
  const refused = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'not from the bot' } }, wrong);
  expect(refused.status).toBe(401);
  const unknown = '00000000-0000-4000-8000-000000000000';
  expect((await botApi('GET', `/chats/${unknown}/messages`)).status).toBe(404);
  expect((await botApi('POST', `/chats/${unknown}/messages`, { json: { content: 'x' } })).status).toBe(404);
  expect((await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'x', sender: 'user' } })).status).toBe(400);
  // None of the refused replies reached the user.
  expect((await client('GET', `/chats/${chatId}/messages`, { token })).body).toEqual([]);
});
