// Many users sending at once while the bot replies: nothing lost or duplicated, every counter exact, every
// realtime subscriber gets every message of its own channel and nothing else.
import { call, newBot, newSession } from '../support/api';
import { liveClient, until, type LiveClient } from '../support/realtime';
import { realtimeOf } from '../support/contract';

const USERS = 10;
const EACH = 10;

test(`${USERS} users × ${EACH} messages, each answered by the bot, all at once`, async () => {
  const { bot, secretKey } = await newBot();
  const auth = { authorization: `Bearer ${secretKey}` };
  const users = await Promise.all(
    Array.from({ length: USERS }, async (_, u) => {
      const s = await newSession(bot.client_key, { external_id: `load-${u}` });
      const chat = await call('POST', '/api/client/chats', { token: s.session_token, json: { name: `load ${u}` } });
      const live: LiveClient = await liveClient(realtimeOf(s));
      return { token: s.session_token, chatId: chat.body.id, live, ids: [] as string[] };
    }),
  );
  try {
    await Promise.all(
      users.flatMap((u) =>
        Array.from({ length: EACH }, async (_, i) => {
          const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content: `q${i}` } });
          expect(sent.status).toBe(201);
          const reply = await call('POST', `/api/bot/chats/${u.chatId}/messages`, { headers: auth, json: { content: `a${i}` } });
          expect(reply.status).toBe(201);
          u.ids.push(sent.body.id, reply.body.id);
        }),
      ),
    );
    for (const u of users) {
      const history = await call('GET', `/api/client/chats/${u.chatId}/messages?limit=500`, { token: u.token });
      const ids = history.body.map((m) => m.id);
      expect(new Set(ids).size).toBe(2 * EACH); // none lost, none duplicated
      expect([...ids].sort()).toEqual([...u.ids].sort());
      await until(() => new Set(u.live.publications.filter((p) => p.type === 'message').map((p) => p.data.id)).size >= 2 * EACH, 10_000, 'every publication');
      // Every reply published: the chat counts each exactly once.
      const chats = await call('GET', '/api/client/chats', { token: u.token });
      expect(chats.body[0].unread_msg_by_user).toBe(EACH);
      const got = u.live.publications.filter((p) => p.type === 'message');
      expect(new Set(got.map((p) => p.data.id))).toEqual(new Set(u.ids));
      expect(got.every((p) => p.data.chat_id === u.chatId)).toBe(true);
    }
    // The bot side agrees: every chat has EACH unread user messages.
    const settled = async () => {
      const list = await call('GET', '/api/bot/chats?limit=50', { headers: auth });
      return list.body.chats.length === USERS && list.body.chats.every((c) => c.unread_count === EACH);
    };
    await until(settled, 15_000, 'the bot chat list to show every unread count');
  } finally {
    for (const u of users) u.live.close();
  }
}, 60_000);
