// The contract's typical flow, end to end over real HTTP against the local gateway, every field checked.
import { call, newBot, newSession, ISO_UTC, UUID } from '../support/api';
import { until } from '../support/realtime';
import type { Chat, Message } from '../support/contract';

test('session → list chats (empty) → create chat → history → send → history sorted by created_at', async () => {
  const { bot } = await newBot({ widget: { primary_color: '#112233', multiple_chats: true, attachments: false } });

  // 1. Session
  const session = await call('POST', '/api/client/session', {
    json: { client_key: bot.client_key, external_id: 'crm-42', first_name: 'Ada', last_name: 'Lovelace' },
  });
  expect(session.status).toBe(200);
  expect(session.headers.get('content-type')).toMatch(/^application\/json/);
  const s = session.body;
  expect(Object.keys(s).sort()).toEqual(['expires_at', 'realtime', 'session_token', 'user', 'widget']);
  expect(s.session_token.split('.')).toHaveLength(3);
  expect(s.expires_at).toMatch(ISO_UTC);
  const ttl = Date.parse(s.expires_at) - Date.now();
  expect(ttl).toBeGreaterThan(24 * 3600_000 - 60_000);
  expect(ttl).toBeLessThanOrEqual(24 * 3600_000);
  expect(s.user).toEqual({
    id: expect.stringMatching(UUID),
    external_id: 'crm-42',
    bot_id: bot.id,
    first_name: 'Ada',
    last_name: 'Lovelace',
    image_url: null,
    status: 'active',
  });
  expect(s.widget).toEqual({ primary_color: '#112233', multiple_chats: true, attachments: false });
  expect(s.realtime).toEqual({
    provider: 'centrifugo',
    url: expect.stringMatching(/^ws:\/\//),
    token: expect.any(String),
    channel: `nexus:user#${s.user.id}`,
  });
  const token = s.session_token;

  // 3. GET /chats: empty, then POST /chats
  expect(await call('GET', '/api/client/chats', { token })).toMatchObject({ status: 200, body: [] });
  const created = await call('POST', '/api/client/chats', {
    token,
    json: { name: 'Order #1', additional_info: { order: 1, tags: ['vip'] }, image_url: 'https://cdn.example/a.png' },
  });
  expect(created.status).toBe(201);
  const chat = created.body;
  expect(chat).toEqual({
    id: expect.stringMatching(UUID),
    name: 'Order #1',
    additional_info: { order: 1, tags: ['vip'] },
    image_url: 'https://cdn.example/a.png',
    unread_msg_by_user: 0,
    created_at: expect.stringMatching(ISO_UTC),
    updated_at: chat.created_at,
  });

  // 4. History of a new chat: empty array
  expect(await call('GET', `/api/client/chats/${chat.id}/messages`, { token })).toMatchObject({ status: 200, body: [] });

  // 5. Send messages
  const sent: Message[] = [];
  for (const content of ['first', 'second', 'third']) {
    const res = await call('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content, content_type: 'text' } });
    expect(res.status).toBe(201);
    sent.push(res.body);
  }
  expect(sent[0]).toEqual({
    id: expect.stringMatching(/^\d{19}$/),
    chat_id: chat.id,
    content: 'first',
    content_type: 'text',
    sender_type: 'incoming',
    sender: 'user',
    files: null,
    is_edited: false,
    edited_at: null,
    created_at: expect.stringMatching(ISO_UTC),
  });
  // Ids are numeric-looking, unique and time-ordered.
  expect(new Set(sent.map((m) => m.id)).size).toBe(3);
  expect([...sent].map((m) => m.id).sort()).toEqual(sent.map((m) => m.id));

  const history = await call('GET', `/api/client/chats/${chat.id}/messages`, { token });
  expect(history.status).toBe(200);
  const sorted = [...history.body].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  expect(sorted).toEqual(sent);

  // The chat moved: updated_at is the last message's time, once the stream has counted it (a moment after
  // the send; docs/api.md).
  let chats: Chat[] = [];
  const moved = async () => (chats = (await call('GET', '/api/client/chats', { token })).body)[0]?.updated_at === sent[2].created_at;
  await until(moved, 5000, "the chat's activity to follow its last message");
  expect(chats).toHaveLength(1);
  expect(chats[0].updated_at).toBe(sent[2].created_at);
});

test('returning visitor: same external_id → same user and history; names update only when given', async () => {
  const { bot } = await newBot();
  const first = await newSession(bot.client_key, { external_id: 'returning-1', first_name: 'Bo' });
  const chat = await call('POST', '/api/client/chats', { token: first.session_token, json: { name: 'c' } });
  await call('POST', `/api/client/chats/${chat.body.id}/messages`, { token: first.session_token, json: { content: 'hello' } });

  const again = await newSession(bot.client_key, { external_id: 'returning-1' });
  expect(again.user).toMatchObject({ id: first.user.id, first_name: 'Bo', last_name: '' });
  const renamed = await newSession(bot.client_key, { external_id: 'returning-1', last_name: 'Diddley' });
  expect(renamed.user).toMatchObject({ id: first.user.id, first_name: 'Bo', last_name: 'Diddley' });

  const chats = await call('GET', '/api/client/chats', { token: again.session_token });
  expect(chats.body.map((c) => c.id)).toEqual([chat.body.id]);
  const history = await call('GET', `/api/client/chats/${chat.body.id}/messages`, { token: again.session_token });
  expect(history.body.map((m) => m.content)).toEqual(['hello']);
});

test('anonymous visitor gets visitor_<uuid>; the same external_id under another bot is another user', async () => {
  const { bot } = await newBot();
  const anon = await newSession(bot.client_key);
  expect(anon.user.external_id).toMatch(/^visitor_[0-9a-f-]{36}$/);
  const anon2 = await newSession(bot.client_key);
  expect(anon2.user.id).not.toBe(anon.user.id);

  const { bot: other } = await newBot();
  const a = await newSession(bot.client_key, { external_id: 'shared-id' });
  const b = await newSession(other.client_key, { external_id: 'shared-id' });
  expect(a.user.id).not.toBe(b.user.id);
  expect(b.user.bot_id).toBe(other.id);
});

test('concurrent first sessions of one external_id agree on a single user', async () => {
  const { bot } = await newBot();
  const sessions = await Promise.all(Array.from({ length: 5 }, () => newSession(bot.client_key, { external_id: 'race' })));
  expect(new Set(sessions.map((s) => s.user.id)).size).toBe(1);
});

test('single-chat mode: a chat created and listed right away is always in the list', async () => {
  const { bot } = await newBot();
  for (let i = 0; i < 10; i++) {
    const { session_token: token } = await newSession(bot.client_key);
    const created = await call('POST', '/api/client/chats', { token, json: { name: 'only one' } });
    const listed = await call('GET', '/api/client/chats', { token });
    expect(listed.body.map((c) => c.id)).toEqual([created.body.id]);
  }
});

test('CORS: preflight and responses allow any origin with Authorization and Content-Type', async () => {
  const pre = await fetch(`${process.env.TEST_API_URL}/api/client/chats`, {
    method: 'OPTIONS',
    headers: { origin: 'https://site.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });
  expect(pre.status).toBe(204);
  expect(pre.headers.get('access-control-allow-origin')).toBe('*');
  expect(pre.headers.get('access-control-allow-headers')).toMatch(/authorization/);
  expect(pre.headers.get('access-control-allow-headers')).toMatch(/content-type/);
  const res = await call('GET', '/api/client/chats', { headers: { origin: 'https://site.example' } });
  expect(res.status).toBe(401);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
});
