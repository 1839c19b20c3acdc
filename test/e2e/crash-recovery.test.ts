// The whole local stack (the `npm start` process tree) killed with SIGKILL during client sends and Bot API
// replies, then restarted on the same data folder: the stream poller and the local queues resume where they
// stopped, so every counter equals its history, every acknowledged message reaches its user's socket (before
// the crash, or after it reconnected) and every acknowledged user message reaches the bot's webhook. And a
// direct upload whose checks the crash cut short is checked after the restart.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, stackEnv, startLocalProcess, type LocalProcess } from '../support/local-process';
import { call } from '../support/api';
import { startReceiver } from '../support/receiver';
import { type BotChatPage, type FileInfo, type Message, realtimeOf } from '../support/contract';
import { liveClient, until, type LiveClient } from '../support/realtime';
import { png } from '../support/files';

jest.setTimeout(240_000);

const CHATS = 8;
/** Acknowledged writes before the kill: enough that the stream and the webhook queue are behind. */
const BEFORE_KILL = 100;
/** The longest the restarted stack's poller waits for the sockets the crash cut (it reads on once all are back). */
const RESUME_WAIT_MS = 60_000;

let dir: string;
let env: Record<string, string>;
let stack: LocalProcess | undefined;
// It takes its time, so that deliveries are in flight when the stack is killed (the queue's journal is needed).
const receiver = startReceiver(200, 300);
const clients: LiveClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-crash-'));
  // The table on disk, as `npm start` keeps it; the bot's settings read fresh, so its webhook applies at once.
  env = await stackEnv(dir, { ECHO_BOT: 'off', DYNAMODB_IN_MEMORY: 'off', BOT_CACHE_TTL_MS: '0', LOCAL_STREAM_RESUME_WAIT_MS: String(RESUME_WAIT_MS) });
  stack = await startLocalProcess(env);
});

/** SIGKILL to the stack's process group: the stack, DynamoDB Local and the S3 emulator at once, as a crash. */
async function crash(running: LocalProcess): Promise<void> {
  process.kill(-(running.child.pid as number), 'SIGKILL');
  await running.stop();
}

afterAll(async () => {
  for (const c of clients) c.close();
  await stack?.stop();
  (await receiver).close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Chat {
  token: string;
  chatId: string;
  live: LiveClient;
  /** Times its socket got subscribed: 2 once it came back after the restart. */
  subscribed: number;
}

test('SIGKILL of the whole stack under load, restart on the same data folder: nothing acknowledged is lost', async () => {
  const base = (stack as LocalProcess).apiUrl;
  const demo = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as { bot_id: string; client_key: string; secret_key: string };
  const hook = await receiver;
  // The demo bot's webhook set as a user sets it: with the bot CLI, on the stack's data folder.
  const cli = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'bot.ts'), 'update', demo.bot_id, '--webhook-url', hook.url], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  expect(cli.status).toBe(0);
  const bot = { authorization: `Bearer ${demo.secret_key}` };

  const chats: Chat[] = [];
  for (let i = 0; i < CHATS; i++) {
    const s = await call('POST', '/api/client/session', { base, json: { client_key: demo.client_key } });
    const chat = await call('POST', '/api/client/chats', { base, token: s.body.session_token, json: { name: `crash ${i}` } });
    const live = await liveClient(realtimeOf(s.body));
    clients.push(live);
    const c: Chat = { token: s.body.session_token, chatId: chat.body.id, live, subscribed: 1 };
    live.sub.on('subscribed', () => c.subscribed++);
    chats.push(c);
  }

  // Each chat: the user sends and the bot replies, one after another, until the connection dies with the stack.
  const acknowledged = new Map<string, { chat: Chat; incoming: boolean }>();
  let killed = false;
  const load = chats.map(async (c) => {
    for (let n = 0; !killed; n++) {
      try {
        const sent = await call('POST', `/api/client/chats/${c.chatId}/messages`, { base, token: c.token, json: { content: `u${n}` } });
        if (sent.status === 201) acknowledged.set(sent.body.id, { chat: c, incoming: true });
        const reply = await call('POST', `/api/bot/chats/${c.chatId}/messages`, { base, headers: bot, json: { content: `b${n}` } });
        if (reply.status === 201) acknowledged.set(reply.body.id, { chat: c, incoming: false });
      } catch {
        return; // the stack is gone
      }
    }
  });
  await until(() => acknowledged.size >= BEFORE_KILL, 60_000, `${BEFORE_KILL} acknowledged writes`);
  // The kill lands while a delivery is held: the receiver answers 300 ms after a request arrives, so the one that
  // just arrived is still unanswered (its job unacknowledged) when the stack dies.
  const seen = hook.hits.length;
  await until(() => hook.hits.length > seen, 30_000, 'a webhook delivery to arrive');
  await crash(stack as LocalProcess);
  killed = true;
  await Promise.all(load);

  stack = await startLocalProcess(env);
  // Every socket reconnects on its own (the centrifuge client) and subscribes again; the poller reads on once
  // they all have, so the publications of the backlog find them.
  await until(() => chats.every((c) => c.subscribed >= 2), 30_000, 'every socket to subscribe again');
  await until(() => /stream poller: resumed/.test(stack?.output() ?? ''), 30_000, 'the poller to read on');
  expect(stack?.output()).toContain(`every socket is back (${CHATS} channel(s))`);
  // The crash cut work in progress, which the restart picked up: webhook jobs in flight, from the queue's journal.
  expect(stack?.output()).toMatch(/webhooks: [1-9]\d* message\(s\) not yet handled before the last stop/);

  // Every chat's counters equal its history: the user's unread replies, the operator's unread user messages.
  const history = new Map<string, Message[]>();
  const miscounted = async () => {
    const botChats = (await call<BotChatPage>('GET', '/api/bot/chats?limit=200', { base, headers: bot })).body.chats;
    const wrong: string[] = [];
    for (const c of chats) {
      const messages = (await call<Message[]>('GET', `/api/client/chats/${c.chatId}/messages?limit=500`, { base, token: c.token })).body;
      history.set(c.chatId, messages);
      const outcoming = messages.filter((m) => m.sender_type === 'outcoming').length;
      const user = (await call('GET', '/api/client/chats', { base, token: c.token })).body[0].unread_msg_by_user;
      const operator = botChats.find((b) => b.id === c.chatId)?.unread_count;
      if (user !== outcoming || operator !== messages.length - outcoming) {
        wrong.push(`${c.chatId}: user ${user} of ${outcoming} replies, operator ${operator} of ${messages.length - outcoming} messages`);
      }
    }
    return wrong;
  };
  await until(async () => (await miscounted()).length === 0, 30_000, 'every chat counter to equal its history').catch(() => undefined);
  expect(await miscounted()).toEqual([]);
  const stored = new Set([...history.values()].flat().map((m) => m.id));
  expect([...acknowledged.keys()].filter((id) => !stored.has(id))).toEqual([]);

  // Published: each acknowledged message reached its user's socket, before the crash or after it reconnected.
  const unpublished = () => [...acknowledged].filter(([id, a]) => !a.chat.live.publications.some((p) => p.type === 'message' && p.data.id === id));
  await until(() => unpublished().length === 0, 30_000, 'every acknowledged message to be published').catch(() => undefined);
  expect(unpublished().map(([id]) => id)).toEqual([]);

  // Every acknowledged user message's webhook delivered (at least once).
  const undelivered = () => [...acknowledged].filter(([id, a]) => a.incoming && !hook.hits.some((h) => h.headers['x-webhook-id'] === id));
  await until(() => undelivered().length === 0, 30_000, 'every acknowledged webhook').catch(() => undefined);
  expect(undelivered().map(([id]) => id)).toEqual([]);
});

test('a direct upload whose checks the crash cut short is checked after the restart', async () => {
  const base = (stack as LocalProcess).apiUrl;
  const demo = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as { client_key: string };
  const session = await call('POST', '/api/client/session', { base, json: { client_key: demo.client_key } });
  const token = session.body.session_token;
  const image = png(1008);
  const ticket = await call('POST', '/api/client/files/uploads', { base, token, json: { name: 'a.png', size: image.length, mime_type: 'image/png' } });
  expect(ticket.status).toBe(201);
  // DynamoDB Local frozen: the upload's checks cannot finish. The browser's POST is answered all the same.
  const { dynamodb } = JSON.parse(readFileSync(join(dir, 'local-stack.json'), 'utf8')) as { dynamodb: number };
  process.kill(dynamodb, 'SIGSTOP');
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.body.upload.fields as Record<string, string>)) form.append(k, v);
  form.append('file', new Blob([image], { type: 'image/png' }), 'a.png');
  expect((await fetch(ticket.body.upload.url, { method: 'POST', body: form })).status).toBe(204);
  await crash(stack as LocalProcess); // SIGKILL ends the frozen JVM too

  stack = await startLocalProcess(env);
  let file: FileInfo | undefined;
  const settled = async () => (file = (await call('GET', `/api/client/files/${ticket.body.file.id}`, { base: stack?.apiUrl, token })).body).status !== 'pending';
  await until(settled, 30_000, 'the upload to settle').catch(() => undefined);
  expect(file).toMatchObject({ id: ticket.body.file.id, status: 'uploaded' });
  // Checked from the event the emulator journaled before it answered the POST.
  expect(stack?.output()).toMatch(/S3 events: [1-9]\d* not handled before the last stop, delivered again/);
});
