// @nexus-chat/client (packages/client) against the run's stack, in Node with `ws` and an in-memory storage: the
// visitor kept, sessions renewed, sends retried exactly once, the store's order and versions, files both ways,
// answers to a bot's question, unread counts, catch-up after a dropped socket, an expired realtime token, and
// polling when the session has no realtime block.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { createChatClient, memoryStorage, type Chat, type ChatClientOptions, type Message } from '../../packages/client/src';
import { apiUrl, call, newBot, type CallOptions } from '../support/api';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { png } from '../support/files';
import { until } from '../support/wait';

let bot: Awaited<ReturnType<typeof newBot>>;
let proxy: FaultProxy;
const clients: { close(): void }[] = [];

beforeAll(async () => {
  bot = await newBot();
  proxy = await startFaultProxy(apiUrl());
});
afterEach(() => clients.splice(0).forEach((c) => c.close()));
afterAll(() => proxy.close());

/** A client of the shared bot through the proxy; a fresh visitor unless a storage is given. */
function client(extra: Partial<ChatClientOptions> = {}) {
  const c = createChatClient({ apiUrl: proxy.url, clientKey: bot.bot.client_key, storage: memoryStorage(), WebSocket, ...extra });
  clients.push(c);
  return c;
}

const asBot = (method: string, path: string, json: unknown, opts: CallOptions = {}) =>
  call<Message>(method, `/api/bot${path}`, { ...opts, json, headers: { authorization: `Bearer ${bot.secretKey}` } });

/** The first value an event gives that passes the check. */
function next<T>(on: (fn: (v: T) => void) => () => void, check: (v: T) => boolean = () => true): Promise<T> {
  return new Promise((resolve) => {
    const off = on((v) => check(v) && (off(), resolve(v)));
  });
}

/** A token signed as the server signs them (the run's JWT secret), already expired. */
function sign(t: { typ: string; aud: string; sub: string; exp: number }): Promise<string> {
  const secret = new TextEncoder().encode(readFileSync(process.env.JWT_SECRET_FILE as string, 'utf8').trim());
  return new SignJWT({ bot: bot.bot.id }).setProtectedHeader({ alg: 'HS256', typ: t.typ }).setIssuer('nexus').setAudience(t.aud).setSubject(t.sub).setIssuedAt(t.exp - 60).setExpirationTime(t.exp).sign(secret);
}

const ids = (chat: Chat) => chat.messages.map((m) => m.id);

test('the visitor is kept per API and client key and comes back with its chat; a 401 renews the session', async () => {
  const storage = memoryStorage();
  const first = client({ storage });
  const chat = await first.chat();
  await chat.sendText('remember me');
  const again = client({ storage });
  const back = await again.chat();
  expect(again.session!.user.id).toBe(first.session!.user.id);
  expect(back.id).toBe(chat.id);
  expect(back.messages.map((m) => m.content)).toEqual(['remember me']);
  // Another client key in the same storage is another visitor.
  const other = await newBot();
  const stranger = client({ storage, clientKey: other.bot.client_key });
  await stranger.connect();
  expect(stranger.session!.user.id).not.toBe(first.session!.user.id);

  // An expired token, refused by the server: one new session for the same visitor, and the request goes through.
  const expired = await sign({ typ: 'nexus-session+jwt', aud: 'nexus:client', sub: again.session!.user.id, exp: Math.floor(Date.now() / 1000) - 5 });
  proxy.inject('GET', /\/chats$/, { kind: 'authorization', value: `Bearer ${expired}` });
  const sessionsBefore = proxy.seen.filter((s) => s.path === '/api/client/session').length;
  expect((await again.listChats()).map((c) => c.id)).toEqual([chat.id]);
  expect(proxy.seen.filter((s) => s.path === '/api/client/session').length).toBe(sessionsBefore + 1);
  // The retry went out with the renewed session's token, not the refused one (a token renewed within the same second may equal the one before it).
  const lists = proxy.seen.filter((s) => s.method === 'GET' && s.path.endsWith('/chats'));
  expect(lists.at(-2)!.outcome).toBe('authorization');
  expect(lists.at(-1)!.outcome).toBe('forwarded');
  expect(lists.at(-1)!.headers.authorization).toBe(`Bearer ${again.session!.session_token}`);
  expect(again.session!.user.id).toBe(first.session!.user.id);
});

test("identity verification: a site's user with the right hash gets a session as that user; identify() switches to one; nothing is stored", async () => {
  const { bot: verified } = await newBot({ identity_verification: true });
  const hash = (id: string) => createHmac('sha256', verified.identity_secret as string).update(id).digest('hex');
  const storage = memoryStorage();
  const c = client({ storage, clientKey: verified.client_key, externalId: 'crm-7', externalIdHash: hash('crm-7'), firstName: 'Ada' });
  expect((await c.connect()).user).toMatchObject({ external_id: 'crm-7', first_name: 'Ada' });
  const wrong = client({ clientKey: verified.client_key, externalId: 'crm-7', externalIdHash: hash('crm-8') });
  await expect(wrong.connect()).rejects.toMatchObject({ status: 403 });
  // An anonymous visitor who logs in: the stored visitor first, then the site's user.
  const visitor = client({ storage, clientKey: verified.client_key });
  const anonymous = (await visitor.connect()).user.external_id;
  expect(anonymous).toMatch(/^visitor_/);
  expect((await visitor.identify({ externalId: 'crm-9', externalIdHash: hash('crm-9') })).user.external_id).toBe('crm-9');
  expect(storage.getItem(`chat.external_id:${proxy.url}:${verified.client_key}`)).toBe(anonymous);
});

test('sendText: a lost reply, a 503 and a 429 are retried under one Idempotency-Key (after Retry-After), and one message is written', async () => {
  const c = client();
  const chat = await c.chat();
  proxy.inject('POST', /\/messages$/, { kind: 'lose-reply' });
  proxy.inject('POST', /\/messages$/, { kind: 'status', status: 503, retryAfter: 1 });
  proxy.inject('POST', /\/messages$/, { kind: 'status', status: 429, retryAfter: 1 });
  const sent = await chat.sendText('exactly once');
  const tries = proxy.seen.filter((s) => s.method === 'POST' && s.path.endsWith(`/chats/${chat.id}/messages`));
  expect(tries.map((t) => t.outcome)).toEqual(['lose-reply', 'status', 'status', 'forwarded']);
  expect(new Set(tries.map((t) => t.headers['idempotency-key'])).size).toBe(1);
  // Each retry after a Retry-After waited for it.
  expect(tries[2].at - tries[1].at).toBeGreaterThanOrEqual(1000);
  expect(tries[3].at - tries[2].at).toBeGreaterThanOrEqual(1000);
  const history = (await call<Message[]>('GET', `/api/client/chats/${chat.id}/messages`, { token: c.session!.session_token })).body;
  expect(history.map((m) => m.id)).toEqual([sent.id]);
  expect(ids(chat)).toEqual([sent.id]);
});

test('the store: a reply and its edits through realtime, each id once in created_at order; an older copy arriving late is ignored', async () => {
  const c = client({ autoRead: false });
  const chat = await c.chat();
  const mine = await chat.sendText('question');
  const replied = next<Message>((fn) => chat.on('message', fn), (m) => m.sender_type === 'outcoming');
  const reply = (await asBot('POST', `/chats/${chat.id}/messages`, { content: 'ans' })).body;
  expect((await replied).id).toBe(reply.id);
  const typing = next<{ active: boolean }>((fn) => chat.on('typing', fn));
  await asBot('POST', `/chats/${chat.id}/typing`, {});
  expect(await typing).toMatchObject({ active: true, sender: 'bot' });
  const updates: Message[] = [];
  chat.on('updated', (m) => updates.push(m));
  await asBot('PATCH', `/chats/${chat.id}/messages/${reply.id}`, { content: 'answer', version: 1 });
  const last = (await asBot('PATCH', `/chats/${chat.id}/messages/${reply.id}`, { content: 'answer, whole', version: 2 })).body;
  await until(() => chat.messages.at(-1)?.content === 'answer, whole', 10_000, 'the second edit');
  expect(ids(chat)).toEqual([mine.id, reply.id]);
  expect(updates.map((m) => m.content)).toEqual(['answer', 'answer, whole']);
  // The first edit's copy again (a late redelivery): ignored, nothing emitted.
  chat.add([{ ...last, content: 'answer', edited_at: updates[0].edited_at }], true);
  chat.add([reply], true);
  expect(chat.messages.map((m) => m.content)).toEqual(['question', 'answer, whole']);
  expect(updates).toHaveLength(2);
});

test('answer: a quick reply is recorded and replaces the question in the store; a value not offered is a 400, another answer a 409, each with the server\'s error', async () => {
  const c = client();
  const chat = await c.chat();
  const items = [{ title: 'Yes', value: 'yes' }, { title: 'No', value: 'no' }];
  const asked = (await asBot('POST', `/chats/${chat.id}/messages`, { content: 'Sure?', content_type: 'input_select', content_attributes: { items } })).body;
  await until(() => ids(chat).includes(asked.id), 10_000, 'the question');
  await expect(chat.answer(asked.id, { value: 'maybe' })).rejects.toMatchObject({ name: 'ApiError', status: 400, message: "value: must be one of the message's items (400)" });
  const updated = next<Message>((fn) => chat.on('updated', fn));
  const answered = await chat.answer(asked.id, { value: 'yes' });
  expect(answered).toMatchObject({ id: asked.id, content_attributes: { items, submitted_values: 'yes', submitted_at: answered.edited_at } });
  expect((await updated).content_attributes).toEqual(answered.content_attributes);
  expect(chat.messages.find((m) => m.id === asked.id)).toEqual(answered);
  expect(await chat.answer(asked.id, { value: 'yes' })).toEqual(answered);
  await expect(chat.answer(asked.id, { value: 'no' })).rejects.toMatchObject({ status: 409, message: 'This message was answered already, with another answer (409)' });
});

test('sendFile: a small file in one request, a large one straight to storage (progress to 1), a rejected one with its reason', async () => {
  const c = client();
  const chat = await c.chat();
  const progress: number[] = [];
  const small = await chat.sendFile(new Blob([png(2048)], { type: 'image/png' }), { onProgress: (f) => progress.push(f) });
  expect(small).toMatchObject({ content_type: 'photo', files: [{ type: 'photo', size: 2048 }] });
  expect(progress).toEqual([0, 1]);
  progress.length = 0;
  const big = Object.assign(new Blob([png(5 * 1024 * 1024)], { type: 'image/png' }), { name: 'big.png' });
  const sent = await chat.sendFile(big, { onProgress: (f) => progress.push(f) });
  expect(sent.files).toMatchObject([{ name: 'big.png', size: 5 * 1024 * 1024, type: 'photo' }]);
  expect(progress[0]).toBe(0);
  expect(progress.at(-1)).toBe(1);
  expect(proxy.seen.some((s) => s.path === '/api/client/files/uploads')).toBe(true);
  const exe = Object.assign(new Blob([Buffer.from('MZ\x90\x00\x03\x00\x00\x00', 'latin1'), new Uint8Array(5 * 1024 * 1024)], { type: 'image/png' }), { name: 'evil.png' });
  await expect(chat.sendFile(exe)).rejects.toThrow(/evil\.png was rejected: the file is/);
  expect(ids(chat)).toEqual([small.id, sent.id]);
});

test("a direct upload's check announced on the channel before storage's reply reaches the client: sendFile takes the announcement, and asks the API nothing", async () => {
  let heard!: () => void;
  const announced = new Promise<void>((r) => (heard = r));
  // Storage's reply (any request not to the API) held back until the channel has announced the file's check.
  const c = client({
    fetch: async (input, init) => {
      const res = await globalThis.fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).startsWith(proxy.url)) await Promise.race([announced, new Promise((r) => setTimeout(r, 10_000))]);
      return res;
    },
  });
  const add = c.files.add.bind(c.files);
  c.files.add = (file) => {
    add(file);
    if (file.status !== 'pending') heard();
  };
  const chat = await c.chat();
  await until(() => c.status === 'online', 10_000, 'the subscription');
  const big = Object.assign(new Blob([png(5 * 1024 * 1024)], { type: 'image/png' }), { name: 'early.png' });
  const sent = await chat.sendFile(big);
  const fileId = sent.files![0].id;
  expect(sent.files).toMatchObject([{ name: 'early.png', type: 'photo' }]);
  expect(proxy.seen.filter((s) => s.path === `/api/client/files/${fileId}`)).toEqual([]);
});

test('unread: a reply while the chat is hidden counts, markRead clears it (and another tab hears of it); shown, a reply is read at once', async () => {
  const storage = memoryStorage();
  const c = client({ storage });
  const chat = await c.chat();
  chat.setVisible(false);
  const counted = next<number>((fn) => c.on('unread', fn), (n) => n === 1);
  await asBot('POST', `/chats/${chat.id}/messages`, { content: 'unseen' });
  await counted;
  expect(chat.unread).toBe(1);
  // A second tab of the same visitor starts with the server's count, and hears the first one's read.
  const tab = client({ storage });
  const other = await tab.chat();
  other.setVisible(false);
  expect(other.unread).toBe(1);
  const heard = next((fn) => other.on('read', fn));
  await chat.markRead();
  await heard;
  expect([chat.unread, other.unread, c.unread]).toEqual([0, 0, 0]);
  const listed = (await call<{ unread_msg_by_user: number }[]>('GET', '/api/client/chats', { token: c.session!.session_token })).body;
  expect(listed[0].unread_msg_by_user).toBe(0);
  // On screen: the reply is marked read by itself.
  chat.setVisible(true);
  const read = next((fn) => other.on('read', fn));
  await asBot('POST', `/chats/${chat.id}/messages`, { content: 'seen' });
  await read;
  // The read's publication can reach the other tab before this tab's own POST /read has answered.
  await until(() => chat.unread === 0, 10_000, 'this tab to count its own read');
  expect(chat.unread).toBe(0);
});

test('a dropped socket: a reply and an edit of an old message sent meanwhile arrive once it is back', async () => {
  // The socket class lets the test cut the connection and hold the next ones until the bot has written.
  let held = false;
  const sockets: WebSocket[] = [];
  class Cuttable extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(held ? 'ws://127.0.0.1:9/held' : url, protocols);
      sockets.push(this);
    }
  }
  const c = client({ WebSocket: Cuttable, autoRead: false });
  const chat = await c.chat();
  const old = (await asBot('POST', `/chats/${chat.id}/messages`, { content: 'old' })).body;
  await until(() => ids(chat).includes(old.id), 10_000, 'the first reply');
  const offline = next((fn) => c.on('status', fn), (s) => s === 'connecting' || s === 'offline');
  held = true;
  sockets.at(-1)!.terminate();
  await offline;
  const missed = (await asBot('POST', `/chats/${chat.id}/messages`, { content: 'while away' })).body;
  await asBot('PATCH', `/chats/${chat.id}/messages/${old.id}`, { content: 'old, edited', version: 1 });
  held = false;
  await until(() => chat.messages.length === 2 && chat.messages[0].content === 'old, edited', 20_000, 'the catch-up');
  expect(ids(chat)).toEqual([old.id, missed.id]);
}, 30_000);

test('a realtime token that has expired: the handshake is refused, the client renews it and the next socket carries the fresh one', async () => {
  proxy.rewriteSession = async (s) => {
    const rt = s.realtime!;
    const expired = await sign({ typ: 'nexus-realtime+jwt', aud: 'nexus:realtime', sub: s.user.id, exp: Math.floor(Date.now() / 1000) - 5 });
    return { ...s, realtime: { ...rt, token: expired, url: rt.url.replace(/token=[^&]+/, `token=${expired}`) } };
  };
  const urls: string[] = [];
  class Recorded extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      urls.push(url);
    }
  }
  const c = client({ WebSocket: Recorded });
  await c.connect();
  await until(() => c.status === 'online', 15_000, 'the client to be online');
  const tokens = urls.map((u) => new URL(u).searchParams.get('token'));
  expect(tokens.length).toBeGreaterThanOrEqual(2);
  expect(tokens[tokens.length - 1]).toBe(c.session!.realtime!.token);
  expect(new Set(tokens).size).toBeGreaterThanOrEqual(2);
  // And it works: a reply arrives live.
  const chat = await c.chat();
  const got = next<Message>((fn) => chat.on('message', fn));
  const reply = (await asBot('POST', `/chats/${chat.id}/messages`, { content: 'fresh token' })).body;
  expect((await got).id).toBe(reply.id);
});

test('without a realtime block the client polls with after= and still gets replies', async () => {
  proxy.stripRealtime = true;
  try {
    const c = client({ pollMs: 100 });
    const chat = await c.chat();
    expect(c.status).toBe('polling');
    await chat.sendText('anyone there?');
    const reply = (await asBot('POST', `/chats/${chat.id}/messages`, { content: 'polled' })).body;
    const got = await next<Message>((fn) => chat.on('message', fn));
    expect(got.id).toBe(reply.id);
    // The polls that follow ask from the messages held (the first may have left before the send).
    await until(() => proxy.seen.some((s) => s.path.startsWith(`/api/client/chats/${chat.id}/messages?`) && s.path.includes('after=')), 5_000, 'a poll with after=');
  } finally {
    proxy.stripRealtime = false;
  }
});
