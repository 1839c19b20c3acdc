// The Bot API over real HTTP: secret-key auth, chats with users and unread counts, history, replies that
// reach the user (counter + realtime), operator read, bot uploads, cross-bot isolation, bad input.
import { botItems, call, newBot, newSession, streamPassed, userWithChat, UUID, type CallOptions, type Reply } from '../support/api';
import { liveClient, until } from '../support/realtime';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { firstFileUrl, present, realtimeOf, type BotChatPage } from '../support/contract';

const bot = <M extends string, U extends string>(method: M, path: U, secret: string, opts: CallOptions = {}) =>
  call(method, `/api/bot${path}` as const, { ...opts, headers: { ...opts.headers, authorization: `Bearer ${secret}` } });

test('secret key auth: wrong, malformed, another bot’s key or a session token → 401; a turned-off bot → 403', async () => {
  const a = await userWithChat();
  const b = await newBot();
  const tampered = a.secretKey.slice(0, -1) + (a.secretKey.endsWith('0') ? '1' : '0');
  for (const auth of [undefined, 'Bearer ', `Bearer ${tampered}`, 'Bearer sk_short', `Basic ${a.secretKey}`, `Bearer ${a.token}`, `Bearer ${a.bot.client_key}`]) {
    const res = await call('GET', '/api/bot/chats', { headers: auth ? { authorization: auth } : {} });
    expect({ auth: auth?.slice(0, 12), status: res.status }).toEqual({ auth: auth?.slice(0, 12), status: 401 });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
  // Another bot's valid key sees none of a's chats: 404 on every chat route.
  for (const [method, path, json] of [
    ['GET', `/chats/${a.chatId}/messages`],
    ['POST', `/chats/${a.chatId}/messages`, { content: 'x' }],
    ['POST', `/chats/${a.chatId}/read`],
  ] as const) {
    const res = await bot(method, path, b.secretKey, { json });
    expect({ path, status: res.status }).toEqual({ path, status: 404 });
  }
  expect((await bot('GET', '/chats', b.secretKey)).body.chats).toEqual([]);
  await updateBot(a.bot.id, { enabled: false });
  expect((await bot('GET', '/chats', a.secretKey)).status).toBe(403);
});

test('list chats: newest activity first, with user and operator unread count, paged with limit and cursor', async () => {
  const { bot: b, secretKey } = await newBot();
  const made: { chatId: string; token: string; ext: string }[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await newSession(b.client_key, { external_id: `shopper-${i}`, first_name: `F${i}`, last_name: `L${i}` });
    const chat = await call('POST', '/api/client/chats', { token: s.session_token, json: { name: `chat ${i}` } });
    made.push({ chatId: chat.body.id, token: s.session_token, ext: `shopper-${i}` });
  }
  // Activity: chat 0 gets two user messages last, so it comes first.
  for (const text of ['a', 'b']) await call('POST', `/api/client/chats/${made[0].chatId}/messages`, { token: made[0].token, json: { content: text } });
  // gsi2 is eventually consistent, and the stream moves the activity a moment after the send.
  let all!: Reply<BotChatPage>;
  await until(async () => {
    all = await bot('GET', '/chats', secretKey);
    return all.body.chats?.[0]?.id === made[0].chatId && all.body.chats[0].unread_count === 2;
  }, 15_000, 'chat 0 first in the bot list with 2 unread');
  expect(all.status).toBe(200);
  expect(all.body.chats.map((c) => c.id)).toEqual([made[0].chatId, made[2].chatId, made[1].chatId]);
  expect(all.body.chats[0]).toEqual({
    id: made[0].chatId,
    name: 'chat 0',
    additional_info: {},
    image_url: null,
    unread_msg_by_user: 0,
    unread_count: 2,
    created_at: expect.any(String),
    updated_at: expect.any(String),
    user: { id: expect.stringMatching(UUID), external_id: 'shopper-0', first_name: 'F0', last_name: 'L0' },
  });
  expect(all.body.next_cursor).toBeNull();

  const page1 = await bot('GET', '/chats?limit=2', secretKey);
  expect(page1.body.chats).toHaveLength(2);
  expect(page1.body.next_cursor).toEqual(expect.any(String));
  const page2 = await bot('GET', `/chats?limit=2&cursor=${page1.body.next_cursor}`, secretKey);
  expect([...page1.body.chats, ...page2.body.chats].map((c) => c.id)).toEqual(all.body.chats.map((c) => c.id));

  // A cursor is only good for its own bot, and must be one we made.
  const other = await newBot();
  expect((await bot('GET', `/chats?cursor=${page1.body.next_cursor}`, other.secretKey)).status).toBe(400);
  // Cursors of the right shape that are not ours: an empty or over-long boundary (DynamoDB would refuse both in
  // a key condition), one that is not an activity key, another bot named.
  const cursorOf = (k: object) => `cursor=${Buffer.from(JSON.stringify(k)).toString('base64url')}`;
  const ours = JSON.parse(Buffer.from(present(page1.body.next_cursor, 'the first page’s next_cursor'), 'base64url').toString('utf8')) as Record<string, string>;
  const forged = [
    cursorOf({ ...ours, before: '' }),
    cursorOf({ ...ours, before: 'x'.repeat(1400) }),
    cursorOf({ ...ours, before: `${ours.before}x` }),
    cursorOf({ ...ours, bot: other.bot.id }),
    cursorOf({ ...ours, extra: '' }),
  ];
  for (const q of ['limit=0', 'limit=201', 'limit=x', 'cursor=', 'cursor=bm9wZQ', `cursor=${Buffer.from('{"pk":1}').toString('base64url')}`, ...forged]) {
    const res = await bot('GET', `/chats?${q}`, secretKey);
    expect({ q, status: res.status }).toEqual({ q, status: 400 });
  }
});

test('a reply: 201 outcoming Message, unread_msg_by_user +1, in the history, and over realtime to the user', async () => {
  const { session, token, chatId, secretKey } = await userWithChat();
  const live = await liveClient(realtimeOf(session));
  try {
    await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'hello bot' } });
    const reply = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: 'hello human' } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ chat_id: chatId, content: 'hello human', content_type: 'text', sender_type: 'outcoming', sender: 'bot', files: null });
    const op = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: 'operator here', sender: 'operator' } });
    expect(op.body).toMatchObject({ sender_type: 'outcoming', sender: 'operator' });
    expect(await live.waitFor((d) => d.data?.id === op.body.id)).toEqual({ type: 'message', data: op.body });
    // Once the user's socket has a reply, the chat list already counts it.
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(2);
    const history = await bot('GET', `/chats/${chatId}/messages`, secretKey);
    expect(history.body.map((m) => m.content)).toEqual(['hello bot', 'hello human', 'operator here']);
    const page = await bot('GET', `/chats/${chatId}/messages?limit=1&before=${op.body.id}`, secretKey);
    expect(page.body.map((m) => m.id)).toEqual([reply.body.id]);
    // The user reads the chat: the counter resets and the read action reaches the user's clients.
    await call('POST', `/api/client/chats/${chatId}/read`, { token });
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(0);
    expect(await live.waitFor((d) => d.type === 'action')).toEqual({ type: 'action', data: { action: 'read', chat_id: chatId } });
  } finally {
    live.close();
  }
});

test('operator read resets the bot side count only; the user sees no read action', async () => {
  const { session, token, chatId, secretKey } = await userWithChat();
  await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'unread by operator' } });
  const live = await liveClient(realtimeOf(session));
  try {
    const read = await bot('POST', `/chats/${chatId}/read`, secretKey);
    expect(read).toMatchObject({ status: 200, body: { status: 'ok' } });
    await until(async () => (await bot('GET', '/chats', secretKey)).body.chats[0]?.unread_count === 0, 15_000, 'the operator side read');
    // A read action would have been published before a later message of the chat.
    const marker = await streamPassed(token, chatId);
    await live.waitFor((d) => d.data?.id === marker.id);
    expect(live.publications.filter((d) => d.type === 'action')).toEqual([]);
  } finally {
    live.close();
  }
});

test('bot upload for a chat, then a photo reply by id; the user downloads the same bytes', async () => {
  const { token, chatId, secretKey, bot: b } = await userWithChat();
  const fd = new FormData();
  fd.append('chat_id', chatId);
  fd.append('file', new Blob([Buffer.from('BOTPNG')], { type: 'image/png' }), 'reply.png');
  const up = await bot('POST', '/files', secretKey, { body: fd });
  expect(up.status).toBe(201);
  expect(up.body).toMatchObject({ id: expect.stringMatching(UUID), type: 'photo', name: 'reply.png', size: 6, status: 'uploaded' });
  const msg = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json: { content: '', content_type: 'photo', files: [up.body.id] } });
  expect(msg.status).toBe(201);
  const history = await call('GET', `/api/client/chats/${chatId}/messages`, { token });
  expect(await (await fetch(firstFileUrl(history.body[0]))).text()).toBe('BOTPNG');

  // Upload errors: no chat_id, a chat of another bot, no file.
  const before = await botItems(b.id);
  const noChat = new FormData();
  noChat.append('file', new Blob([Buffer.from('x')]), 'x.bin');
  expect((await bot('POST', '/files', secretKey, { body: noChat })).status).toBe(400);
  const foreign = await userWithChat();
  const wrongChat = new FormData();
  wrongChat.append('chat_id', foreign.chatId);
  wrongChat.append('file', new Blob([Buffer.from('x')]), 'x.bin');
  expect((await bot('POST', '/files', secretKey, { body: wrongChat })).status).toBe(404);
  const noFile = new FormData();
  noFile.append('chat_id', chatId);
  expect((await bot('POST', '/files', secretKey, { body: noFile })).status).toBe(400);
  expect(await botItems(b.id)).toEqual(before);
});

test('bad input on the Bot API → 400 {error}, nothing written; unknown chat → 404', async () => {
  const { chatId, secretKey, bot: b } = await userWithChat();
  const before = await botItems(b.id);
  for (const json of [{ content: 'x', sender: 'user' }, { content: 'x', sender: 1 }, { content: '' }, { content: 5 }, { content: 'x', content_type: 'gif' }, { content: 'x', files: ['nope'] }]) {
    const res = await bot('POST', `/chats/${chatId}/messages`, secretKey, { json });
    expect({ json, status: res.status }).toEqual({ json, status: 400 });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
  expect((await bot('POST', `/chats/${chatId}/messages`, secretKey, { body: '{bad', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  expect((await bot('GET', '/chats/not-a-uuid/messages', secretKey)).status).toBe(400);
  expect((await bot('GET', '/chats/00000000-0000-4000-8000-000000000000/messages', secretKey)).status).toBe(404);
  expect((await bot('GET', `/chats/${chatId}/messages?limit=0`, secretKey)).status).toBe(400);
  expect(await botItems(b.id)).toEqual(before);
});
