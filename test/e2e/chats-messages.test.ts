// Chats and messages: ownership (403/404/400), history paging, read and unread counters.
import { until } from '../support/realtime';
import { botItems, call, newSession, streamPassed, userWithChat } from '../support/api';
import { textMessage } from '../support/fixtures';
import { createMessage } from '../../lambdas/flows/send';
import type { Message } from '../support/contract';

const UNKNOWN_CHAT = '00000000-0000-4000-8000-000000000000';

async function send(token: string, chatId: string, n: number, prefix = 'm') {
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    const res = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: `${prefix}${i}` } });
    expect(res.status).toBe(201);
    out.push(res.body);
  }
  return out;
}

describe('ownership', () => {
  test("another user's chat → 403, unknown → 404, malformed id → 400, on every chat route; nothing written", async () => {
    const owner = await userWithChat();
    const intruder = await newSession(owner.bot.client_key);
    const t = intruder.session_token;
    const before = await botItems(owner.bot.id);
    const cases: [string, number][] = [
      [owner.chatId, 403],
      [UNKNOWN_CHAT, 404],
      ['not-a-uuid', 400],
      ['1', 400],
      [owner.chatId.toUpperCase(), 400],
      ['%27%20OR%201%3D1', 400],
    ];
    for (const [chatId, status] of cases) {
      for (const [method, suffix, json] of [
        ['GET', 'messages', undefined],
        ['POST', 'messages', { content: 'hi' }],
        ['POST', 'read', undefined],
      ] as const) {
        const res = await call(method, `/api/client/chats/${chatId}/${suffix}`, { token: t, json });
        expect({ chatId, method, suffix, status: res.status }).toEqual({ chatId, method, suffix, status });
        expect(res.body).toEqual({ error: expect.any(String) });
      }
    }
    expect(await botItems(owner.bot.id)).toEqual(before);
    // The intruder's list does not show the owner's chat.
    expect((await call('GET', '/api/client/chats', { token: t })).body).toEqual([]);
  });

  test("a user of another bot gets 403 for a chat id it does not own", async () => {
    const a = await userWithChat();
    const b = await userWithChat();
    const res = await call('GET', `/api/client/chats/${a.chatId}/messages`, { token: b.token });
    expect(res.status).toBe(403);
  });
});

describe('history', () => {
  test('default page is the newest 100; limit, before and after page through everything exactly once', async () => {
    const { token, chatId } = await userWithChat();
    const sent = await send(token, chatId, 105);
    const ids = sent.map((m) => m.id);
    const list = (q = '') => call('GET', `/api/client/chats/${chatId}/messages?${q}`, { token });

    const page = await list();
    expect(page.body.map((m) => m.id)).toEqual(ids.slice(5));

    expect((await list('limit=3')).body.map((m) => m.id)).toEqual(ids.slice(102));
    expect((await list(`limit=3&before=${ids[10]}`)).body.map((m) => m.id)).toEqual(ids.slice(7, 10));
    expect((await list(`limit=4&after=${ids[10]}`)).body.map((m) => m.id)).toEqual(ids.slice(11, 15));
    expect((await list(`after=${ids[100]}&before=${ids[104]}`)).body.map((m) => m.id)).toEqual(ids.slice(101, 104));
    expect((await list(`after=${ids[50]}&before=${ids[51]}`)).body).toEqual([]);
    expect((await list(`after=${ids[104]}`)).body).toEqual([]);
    expect((await list(`before=${ids[0]}`)).body).toEqual([]);
    // Bounds that are not message ids of this chat still page by time.
    expect((await list(`limit=2&before=${'9'.repeat(19)}`)).body.map((m) => m.id)).toEqual(ids.slice(103));

    // Walk backwards with `before` from the newest page, collecting everything once.
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const p = await list(`limit=20${cursor}`);
      seen.unshift(...p.body.map((m) => m.id));
      if (p.body.length < 20) break;
      cursor = `&before=${p.body[0].id}`;
    }
    expect(seen).toEqual(ids);

    const limitMax = await list('limit=500');
    expect(limitMax.body).toHaveLength(105);
  });

  test('bad paging parameters → 400', async () => {
    const { token, chatId } = await userWithChat();
    const [m] = await send(token, chatId, 1);
    for (const q of ['limit=0', 'limit=501', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'before=abc', 'after=123', `after=${m.id}&before=${m.id}`, 'before=%00']) {
      const res = await call('GET', `/api/client/chats/${chatId}/messages?${q}`, { token });
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  });

  test('empty chats of other users are still 403, not an empty list', async () => {
    const a = await userWithChat();
    const b = await newSession(a.bot.client_key);
    for (const q of ['', `?after=${'1'.repeat(19)}`, `?before=${'9'.repeat(19)}`, `?after=${'1'.repeat(19)}&before=${'9'.repeat(19)}`]) {
      const res = await call('GET', `/api/client/chats/${a.chatId}/messages${q}`, { token: b.session_token });
      expect({ q, status: res.status }).toEqual({ q, status: 403 });
    }
    const own = await call('GET', `/api/client/chats/${a.chatId}/messages?after=${'1'.repeat(19)}&before=${'9'.repeat(19)}`, { token: a.token });
    expect(own).toMatchObject({ status: 200, body: [] });
  });
});

describe('read and unread', () => {
  test('bot replies raise unread_msg_by_user; POST /read resets it and answers {status: ok}', async () => {
    const { token, chatId, userId, bot } = await userWithChat();
    await send(token, chatId, 1);
    // Replies are written by the same domain function the Bot API uses.
    for (let i = 0; i < 3; i++) {
      await createMessage(textMessage({ userId, botId: bot.id, chatId }, `reply ${i}`, i ? 'operator' : 'bot'));
    }
    // The stream counts them (a moment after the writes); never more than once.
    const unread = async () => (await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user;
    await until(async () => (await unread()) === 3, 5000, 'three replies counted');
    const history = await call('GET', `/api/client/chats/${chatId}/messages`, { token });
    expect(history.body.map((m) => [m.sender_type, m.sender])).toEqual([
      ['incoming', 'user'],
      ['outcoming', 'bot'],
      ['outcoming', 'operator'],
      ['outcoming', 'operator'],
    ]);
    await streamPassed(token, chatId);
    expect(await unread()).toBe(3);

    const read = await call('POST', `/api/client/chats/${chatId}/read`, { token });
    expect(read).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(0);
    // A body on /read is ignored, as the contract shows none.
    expect((await call('POST', `/api/client/chats/${chatId}/read`, { token, json: { anything: 1 } })).status).toBe(200);
  });

  test('chats are listed newest activity first', async () => {
    const { token, chatId: first } = await userWithChat();
    const second = (await call('POST', '/api/client/chats', { token, json: { name: 'second' } })).body.id;
    const list = await call('GET', '/api/client/chats', { token });
    expect(list.body.map((c) => c.id)).toEqual([second, first]);
    await send(token, first, 1);
    // The chat's activity moves with the stream, before the message is published (a moment after the send).
    const order = async () => (await call('GET', '/api/client/chats', { token })).body.map((c) => c.id).join();
    await until(async () => (await order()) === [first, second].join(), 5000, 'the first chat on top');
  });
});
