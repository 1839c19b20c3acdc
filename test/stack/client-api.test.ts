// The Client API as a website uses it, against whichever stack the run targets: sessions, chats in the mode the
// bot's widget says, messages and their history, a safe retry, a photo, unread and read, and the errors a
// client handles.
import { ISO_UTC, UUID } from '../support/http';
import { until } from '../support/wait';
import { firstFileUrl, present, type Message } from '../support/contract';
import { botApi, client, conventionalChat, ext, openSession, originHeader, say, T } from './client';

const byCreated = (a: Message, b: Message) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id);

test('session: a new user gets a 24 h token, its user, the widget and (when on) realtime; the same external_id returns', async () => {
  const res = await client('POST', '/session', {
    json: { client_key: T.clientKey, external_id: ext('ada'), first_name: 'Ada', last_name: 'Lovelace' },
    headers: originHeader(),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const s = res.body;
  expect(s.session_token.split('.')).toHaveLength(3);
  expect(s.expires_at).toMatch(ISO_UTC);
  const ttl = Date.parse(s.expires_at) - Date.now();
  expect(ttl).toBeGreaterThan(24 * 3600_000 - 5 * 60_000);
  expect(ttl).toBeLessThanOrEqual(24 * 3600_000 + 60_000);
  expect(s.user).toEqual({
    id: expect.stringMatching(UUID),
    external_id: ext('ada'),
    bot_id: T.botId,
    first_name: 'Ada',
    last_name: 'Lovelace',
    image_url: null,
    status: 'active',
  });
  expect(s.widget).toEqual({ primary_color: expect.stringMatching(/^#[0-9a-fA-F]{6}$/), multiple_chats: expect.any(Boolean), attachments: expect.any(Boolean) });
  if (T.realtime) {
    expect(s.realtime).toEqual({ provider: expect.any(String), url: expect.stringMatching(/^wss?:\/\//), token: expect.any(String), channel: `nexus:user#${s.user.id}` });
  } else {
    expect(s.realtime).toBeUndefined();
  }

  // A returning visitor: same user; names given overwrite, names omitted are kept; its token works.
  const again = await openSession('ada', { last_name: 'King' });
  expect(again.user).toEqual({ ...s.user, last_name: 'King' });
  expect((await client('GET', '/chats', { token: again.session_token })).status).toBe(200);

  // Another external id is another user.
  const other = await openSession('grace');
  expect(other.user.id).not.toBe(s.user.id);
  expect(other.user.external_id).toBe(ext('grace'));
});

test('chats: single-chat mode (or several chats when the widget allows) and a returning user finds the same chat', async () => {
  const first = await openSession('chats');
  const token = first.session_token;
  expect(await client('GET', '/chats', { token })).toMatchObject({ status: 200, body: [] });
  const created = await client('POST', '/chats', { token, json: { name: 'Order #1', additional_info: { order: 1, tags: ['vip'] } } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ id: expect.stringMatching(UUID), name: 'Order #1', additional_info: { order: 1, tags: ['vip'] }, unread_msg_by_user: 0 });
  const listed = await client('GET', '/chats', { token });
  expect(listed.body).toEqual([expect.objectContaining({ id: created.body.id, name: 'Order #1', unread_msg_by_user: 0 })]);

  // The visitor comes back (a new session for the stored external_id): the convention lands on the same chat.
  const back = await openSession('chats');
  expect(await conventionalChat(back.session_token)).toBe(created.body.id);

  if (T.widget.multiple_chats) {
    // The widget shows a chat list: a second chat is listed too, newest activity first.
    const second = await client('POST', '/chats', { token, json: { name: 'Order #2' } });
    expect(second.status).toBe(201);
    await say(token, created.body.id, 'bump the first');
    const both = await client('GET', '/chats', { token });
    expect(both.body.map((c) => c.id)).toEqual([created.body.id, second.body.id]);
  } else {
    // Single-chat mode: the client never makes a second chat, and the list stays that one chat.
    expect((await client('GET', '/chats', { token: back.session_token })).body.map((c) => c.id)).toEqual([created.body.id]);
  }
});

test('messages: send (201 Message), history in created_at order, a retried send with the same key is not duplicated', async () => {
  const { session_token: token } = await openSession('messages');
  const chatId = await conventionalChat(token);
  const sent: Message[] = [];
  for (const content of ['first', 'second', 'third']) {
    const res = await say(token, chatId, content);
    expect(res.status).toBe(201);
    sent.push(res.body);
  }
  expect(sent[0]).toEqual({
    id: expect.stringMatching(/^\d+$/),
    chat_id: chatId,
    content: 'first',
    content_type: 'text',
    sender_type: 'incoming',
    sender: 'user',
    files: null,
    is_edited: false,
    edited_at: null,
    created_at: expect.stringMatching(ISO_UTC),
  });
  expect(new Set(sent.map((m) => m.id)).size).toBe(3);
  const history = await client('GET', `/chats/${chatId}/messages`, { token });
  expect(history.status).toBe(200);
  expect([...history.body].sort(byCreated)).toEqual(sent);

  // A send retried with its client_message_id returns the first message and adds nothing; reusing the key
  // for another message is a conflict.
  const key = `${T.prefix}tap-1`;
  const once = await say(token, chatId, 'pay invoice 42', { client_message_id: key });
  expect(once.status).toBe(201);
  const retry = await say(token, chatId, 'pay invoice 42', { client_message_id: key });
  expect(retry.status).toBe(200);
  expect(retry.body).toEqual(once.body);
  const clash = await say(token, chatId, 'something else', { client_message_id: key });
  expect(clash.status).toBe(409);
  expect(clash.body).toEqual({ error: expect.any(String) });
  const after = await client('GET', `/chats/${chatId}/messages`, { token });
  expect(after.body.map((m) => m.content).sort()).toEqual(['first', 'pay invoice 42', 'second', 'third']);

  // Paging from the end: after=<id> gives what came later.
  const later = await client('GET', `/chats/${chatId}/messages?after=${sent[1].id}`, { token });
  expect(later.body.map((m) => m.id)).toEqual([sent[2].id, once.body.id]);
});

test('files: upload a photo (201), send it in a message, history carries the file and its URL serves the bytes', async () => {
  const { session_token: token } = await openSession('files');
  const chatId = await conventionalChat(token);
  const bytes = Buffer.from(`\x89PNG\r\n\x1a\n${T.prefix}`);
  const fd = new FormData();
  fd.append('file', new Blob([bytes], { type: 'image/png' }), 'cat.png');
  const up = await client('POST', '/files', { token, body: fd });
  expect(up.status).toBe(201);
  expect(up.body).toMatchObject({ id: expect.stringMatching(UUID), type: 'photo', url: expect.stringMatching(/^https?:\/\//), status: expect.any(String) });

  const sent = await client('POST', `/chats/${chatId}/messages`, { token, json: { content: '', content_type: 'photo', files: [up.body.id] } });
  expect(sent.status).toBe(201);
  expect(sent.body).toMatchObject({ content: '', content_type: 'photo', sender_type: 'incoming', files: [expect.objectContaining({ id: up.body.id, type: 'photo' })] });

  const history = await client('GET', `/chats/${chatId}/messages`, { token });
  const msg = present(history.body.find((m) => m.id === sent.body.id), 'the sent message in the history');
  expect(msg.files).toHaveLength(1);
  const download = await fetch(firstFileUrl(msg));
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);

  // Without a file part: 400.
  const empty = new FormData();
  empty.append('type', 'photo');
  expect(await client('POST', '/files', { token, body: empty })).toMatchObject({ status: 400, body: { error: expect.any(String) } });
});

test('unread and read: a bot reply counts as unread for the user; POST /read resets it', async () => {
  const { session_token: token } = await openSession('unread');
  const chatId = await conventionalChat(token);
  await say(token, chatId, 'anyone there?');
  const reply = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'Yes, how can I help?' } });
  expect(reply.status).toBe(201);
  // The chat counts the reply as the stream publishes it (a moment after the 201).
  const count = async () => (await client('GET', '/chats', { token })).body.find((c) => c.id === chatId)?.unread_msg_by_user;
  await until(async () => (await count()) === 1, T.patienceMs, 'the reply counted');
  expect(await client('POST', `/chats/${chatId}/read`, { token })).toMatchObject({ status: 200, body: { status: 'ok' } });
  const read = await client('GET', '/chats', { token });
  expect(read.body.find((c) => c.id === chatId)?.unread_msg_by_user).toBe(0);
});

test('errors a client handles: 401 without a valid token, 403 on another user’s chat, 404 unknown chat or key, 400 bad input', async () => {
  const owner = await openSession('owner');
  const chatId = await conventionalChat(owner.session_token);
  const intruder = await openSession('intruder');
  const unknown = '00000000-0000-4000-8000-000000000000';
  const tampered = owner.session_token.slice(0, -2) + (owner.session_token.endsWith('AA') ? 'BB' : 'AA');

  const cases: [string, string, Record<string, unknown>, number][] = [
    ['GET', '/chats', {}, 401],
    ['GET', '/chats', { token: 'not-a-token' }, 401],
    ['GET', '/chats', { token: tampered }, 401],
    ['POST', `/chats/${chatId}/messages`, { token: tampered, json: { content: 'x' } }, 401],
    ['GET', `/chats/${chatId}/messages`, { token: intruder.session_token }, 403],
    ['POST', `/chats/${chatId}/messages`, { token: intruder.session_token, json: { content: 'let me in' } }, 403],
    ['POST', `/chats/${chatId}/read`, { token: intruder.session_token }, 403],
    ['GET', `/chats/${unknown}/messages`, { token: owner.session_token }, 404],
    ['POST', `/chats/${unknown}/messages`, { token: owner.session_token, json: { content: 'x' } }, 404],
    ['GET', '/chats/not-a-chat/messages', { token: owner.session_token }, 400],
    ['POST', `/chats/${chatId}/messages`, { token: owner.session_token, json: { content: 42 } }, 400],
    ['POST', '/chats', { token: owner.session_token, json: { additional_info: {} } }, 400],
    ['POST', '/session', { json: { client_key: `cli_${'0'.repeat(32)}`, external_id: ext('nobody') }, headers: originHeader() }, 404],
    ['POST', '/session', { json: { external_id: ext('nobody') }, headers: originHeader() }, 400],
  ];
  for (const [method, path, opts, status] of cases) {
    const res = await client(method, path, opts);
    expect({ method, path, status: res.status }).toEqual({ method, path, status });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
  // Nothing of the intruder's landed in the owner's chat.
  const history = await client('GET', `/chats/${chatId}/messages`, { token: owner.session_token });
  expect(history.body).toEqual([]);
});
