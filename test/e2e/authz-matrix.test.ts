// The authorization matrix: every chat route × (own, another user's, another bot's, unknown, malformed)
// resource → exactly the contract's status. Also JWT algorithm confusion.
import { call, newSession, userWithChat } from '../support/api';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

/** A user with a chat, another user's chat of the same bot, and a chat of another bot. */
async function chatsAroundMe() {
  const me = await userWithChat();
  const sameBot = await newSession(me.bot.client_key);
  const otherUserChat = (await call('POST', '/api/client/chats', { token: sameBot.session_token, json: { name: 'theirs' } })).body.id;
  const otherBot = await userWithChat();
  return { me, otherUserChat, otherBot };
}

test('client routes: own → 2xx, another user’s or another bot’s chat → 403, unknown → 404, malformed → 400', async () => {
  const { me, otherUserChat, otherBot } = await chatsAroundMe();
  const resources: [string, string, number][] = [
    ['own', me.chatId, 0],
    ["another user's", otherUserChat, 403],
    ["another bot's", otherBot.chatId, 403],
    ['unknown', UNKNOWN, 404],
    ['malformed', 'not-a-chat', 400],
  ];
  const routes: [string, string, unknown, number][] = [
    ['GET', 'messages', undefined, 200],
    ['POST', 'messages', { content: 'hi' }, 201],
    ['POST', 'read', undefined, 200],
  ];
  for (const [method, suffix, json, okStatus] of routes) {
    for (const [what, chatId, status] of resources) {
      const res = await call(method, `/api/client/chats/${chatId}/${suffix}`, { token: me.token, json });
      const want = status || okStatus;
      expect({ route: `${method} ${suffix}`, what, status: res.status }).toEqual({ route: `${method} ${suffix}`, what, status: want });
      if (want >= 400) expect(res.body).toEqual({ error: expect.any(String) });
    }
  }
});

test('Bot API routes: any chat of the bot → 2xx, another bot’s or unknown → 404, malformed → 400', async () => {
  const { me, otherUserChat, otherBot } = await chatsAroundMe();
  const auth = { authorization: `Bearer ${me.secretKey}` };
  const resources: [string, string, number][] = [
    ['own user', me.chatId, 0],
    ["another user's (same bot)", otherUserChat, 0],
    ["another bot's", otherBot.chatId, 404],
    ['unknown', UNKNOWN, 404],
    ['malformed', 'not-a-chat', 400],
  ];
  for (const [what, chatId, status] of resources) {
    const cases: [string, Promise<{ status: number; body: unknown }>, number][] = [
      ['GET messages', call('GET', `/api/bot/chats/${chatId}/messages`, { headers: auth }), 200],
      ['POST messages', call('POST', `/api/bot/chats/${chatId}/messages`, { headers: auth, json: { content: 'hi' } }), 201],
      ['POST read', call('POST', `/api/bot/chats/${chatId}/read`, { headers: auth }), 200],
      [
        'POST files',
        (() => {
          const fd = new FormData();
          fd.append('chat_id', chatId);
          fd.append('file', new Blob([Buffer.from('x')]), 'x.txt');
          return call('POST', '/api/bot/files', { headers: auth, body: fd });
        })(),
        201,
      ],
    ];
    for (const [route, pending, okStatus] of cases) {
      const res = await pending;
      const want = status || okStatus;
      expect({ route, what, status: res.status }).toEqual({ route, what, status: want });
    }
  }
});

test('algorithm confusion: RS256/ES256/none headers over a valid HS256 body are refused', async () => {
  const { token } = await userWithChat();
  const [, payload, signature] = token.split('.');
  for (const alg of ['RS256', 'ES256', 'PS256', 'none', 'HS384', 'hs256']) {
    const header = Buffer.from(JSON.stringify({ alg, typ: 'nexus-session+jwt' })).toString('base64url');
    const res = await call('GET', '/api/client/chats', { headers: { authorization: `Bearer ${header}.${payload}.${signature}` } });
    expect({ alg, status: res.status }).toEqual({ alg, status: 401 });
  }
});
