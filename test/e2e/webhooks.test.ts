// Webhooks against receivers run by the test: the event and its signature, retries, the dead-letter queue,
// one bot's failing receiver not delaying another's, secret rotation, and the echo bot of `npm start`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, newSession, userWithChat } from '../support/api';
import { freePort } from '../support/ports';
import { jsonLines } from '../support/jsonl';
import { liveClient, until } from '../support/realtime';
import { sleep } from '../support/wait';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { buildWebhookEvent, mayStillSend } from '../../lambdas/flows/webhook-events';
import type { MessageItem } from '../../lambdas/entities/messages';
import { keys } from '../../lambdas/entities/keys';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { verifyWebhook } from '../../examples/echo-bot';
import { checkWebhook } from '../support/openapi';
import { present, realtimeOf, type Schemas } from '../support/contract';
import type { DeadLetter } from '../../lib/local/dead-letters';
import type { DemoBot } from '../../lib/local/stack';

interface Hit {
  headers: IncomingMessage['headers'];
  raw: string;
  /** The delivery parsed (every one is checked against docs/openapi.yaml's message.created below). */
  body: Schemas['WebhookMessageCreated'];
}

/** A webhook's dead letter: the job, as far as these tests read it. */
type WebhookDeadLetter = DeadLetter & { body: { message?: { id: string } } };

/** A webhook receiver: `answer` decides each response (a status, or 'hang' to never answer). */
async function receiver(answer: (n: number) => number | 'hang' = () => 200) {
  const hits: Hit[] = [];
  let pending = 0;
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString();
    hits.push({ headers: req.headers, raw, body: JSON.parse(raw) as Hit['body'] });
    // Checked after the answer is written: the first check compiles the document's schemas, which must not
    // count against the stack's webhook timeout.
    setImmediate(() => undocumented.push(...checkWebhook('message.created', req.headers, JSON.parse(raw))));
    const a = answer(hits.length);
    if (a === 'hang') {
      pending++;
      req.socket.once('close', () => pending--);
      return;
    }
    res.writeHead(a);
    res.end();
  };
  const server: Server = createServer((req, res) => void serve(req, res));
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${port}/hook`, hits, pending: () => pending, close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const servers: { close(): void }[] = [];
afterAll(() => servers.forEach((s) => s.close()));

/** Every delivery the receivers got, checked against docs/openapi.yaml's webhooks.message.created. */
const undocumented: string[] = [];
afterEach(() => {
  expect(undocumented.splice(0)).toEqual([]);
});

async function botWithWebhook(answer?: (n: number) => number | 'hang') {
  const r = await receiver(answer);
  servers.push(r);
  const u = await userWithChat();
  const { bot } = await updateBot(u.bot.id, { webhook_url: r.url });
  return { ...u, hook: r, webhookSecret: bot.webhook_secret as string };
}

const say = (token: string, chatId: string, content: string) =>
  call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content } });

test('each user message is POSTed as message.created with a verifiable signature; bot replies are not', async () => {
  const { token, chatId, hook, webhookSecret, bot, session, secretKey } = await botWithWebhook();
  const sent = await say(token, chatId, 'hi webhook');
  await until(() => hook.hits.length >= 1, 5000, 'the webhook');
  const [hit] = hook.hits;
  expect(hit.body).toEqual({
    event: 'message.created',
    bot_id: bot.id,
    chat: expect.objectContaining({ id: chatId, name: 'Support', unread_msg_by_user: 0 }),
    user: { id: session.user.id, external_id: session.user.external_id, first_name: '', last_name: '' },
    message: sent.body,
  });
  expect(hit.headers['content-type']).toBe('application/json');
  expect(hit.headers['x-webhook-id']).toBe(sent.body.id);
  const ts = hit.headers['x-webhook-timestamp'] as string;
  expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
  const expected = createHmac('sha256', webhookSecret).update(`${ts}.${hit.raw}`).digest('hex');
  expect(hit.headers['x-webhook-signature']).toBe(expected);
  expect(verifyWebhook(webhookSecret, hit.raw, ts, expected)).toBe(true);
  expect(verifyWebhook(webhookSecret, hit.raw.replace('hi webhook', 'hi webhooK'), ts, expected)).toBe(false);
  expect(verifyWebhook('whsec_other', hit.raw, ts, expected)).toBe(false);
  expect(verifyWebhook(webhookSecret, hit.raw, String(Number(ts) - 3600), expected)).toBe(false);

  // A reply through the Bot API is outcoming: no webhook for it.
  await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: { authorization: `Bearer ${secretKey}` }, json: { content: 'reply' } });
  const second = await say(token, chatId, 'second');
  await until(() => hook.hits.length >= 2, 5000, 'the second webhook');
  expect(hook.hits.map((h) => h.body.message.id)).toEqual([sent.body.id, second.body.id]);
});

test('a job that comes back after its user was erased and the revocation record expired (a dead-letter queue redriven days later) sends nothing', async () => {
  const { token, chatId, session, bot } = await userWithChat();
  const sent = await say(token, chatId, 'erase me later');
  const userId = session.user.id;
  const message = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.message(userId, chatId, sent.body.id), ConsistentRead: true }))).Item as MessageItem; // a test's read of the table: the item as the service wrote it
  const job = { bot_id: bot.id, message, attempt: 5 };
  expect(await buildWebhookEvent(job)).toMatchObject({ event: 'message.created', chat: { id: chatId } });
  expect(await mayStillSend({ user_id: userId, chat_id: chatId, bot_id: bot.id })).toBe(true);
  // What an erasure leaves a day later: no chat, and no revocation record (expired by TTL).
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.chat(userId, chatId) }));
  expect(await buildWebhookEvent(job)).toBeUndefined();
  expect(await mayStillSend({ user_id: userId, chat_id: chatId, bot_id: bot.id })).toBe(false);
});

test('a failing receiver is retried with the same event id until it answers 2xx', async () => {
  const { token, chatId, hook } = await botWithWebhook((n) => (n <= 2 ? 503 : 200));
  const sent = await say(token, chatId, 'please retry');
  await until(() => hook.hits.length >= 3, 10_000, 'three attempts');
  expect(hook.hits.map((h) => h.headers['x-webhook-id'])).toEqual([sent.body.id, sent.body.id, sent.body.id]);
  await sleep(1500); // no more may come, and nothing marks when one would have: a retry comes 1 s after (WEBHOOK_RETRY_DELAYS)
  expect(hook.hits).toHaveLength(3); // delivered: no more attempts
});

test('after the bounded retries the event goes to the dead-letter queue', async () => {
  const { token, chatId, hook, bot } = await botWithWebhook(() => 500);
  const sent = await say(token, chatId, 'doomed');
  const file = join(process.env.DATA_DIR as string, 'dead-letter', 'webhooks_dlq.jsonl');
  const dead = () => jsonLines<WebhookDeadLetter>(file);
  await until(() => dead().some((d) => d.body.message?.id === sent.body.id), 15_000, 'the dead letter');
  const entry = present(dead().find((d) => d.body.message?.id === sent.body.id), 'the dead letter');
  expect(entry.body).toMatchObject({ bot_id: bot.id, attempt: 2, reason: 'HTTP 500', url: hook.url });
  expect(hook.hits).toHaveLength(3); // the first attempt and WEBHOOK_RETRY_DELAYS=1,1
});

test("one bot's hanging receiver does not hold back another bot's events", async () => {
  const slow = await botWithWebhook(() => 'hang');
  const fast = await botWithWebhook();
  for (let i = 0; i < 3; i++) await say(slow.token, slow.chatId, `slow ${i}`);
  await until(() => slow.hook.pending() >= 1, 5000, 'the slow receiver to be waiting');
  const sent = await say(fast.token, fast.chatId, 'fast');
  await until(() => fast.hook.hits.length >= 1, 5000, 'the fast webhook');
  // The fast bot was served while the slow one's requests were still hanging.
  expect(slow.hook.pending()).toBeGreaterThanOrEqual(1);
  expect(fast.hook.hits[0].body.message.id).toBe(sent.body.id);
});

test('rotating secrets: the old secret key stops working; webhooks are signed with the new webhook secret', async () => {
  const { token, chatId, hook, webhookSecret, bot, secretKey } = await botWithWebhook();
  const rotated = await updateBot(bot.id, {}, { secretKey: true, webhookSecret: true });
  const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  expect((await call('GET', '/api/bot/chats', auth(secretKey))).status).toBe(401);
  expect((await call('GET', '/api/bot/chats', auth(rotated.secretKey as string))).status).toBe(200);
  await say(token, chatId, 'after rotation');
  await until(() => hook.hits.length >= 1, 5000, 'the webhook');
  const hit = hook.hits[0];
  const ts = hit.headers['x-webhook-timestamp'] as string;
  const sig = hit.headers['x-webhook-signature'] as string;
  expect(rotated.bot.webhook_secret).not.toBe(webhookSecret);
  expect(verifyWebhook(rotated.bot.webhook_secret as string, hit.raw, ts, sig)).toBe(true);
  expect(verifyWebhook(webhookSecret, hit.raw, ts, sig)).toBe(false);
});

test('removing the webhook stops deliveries', async () => {
  const { token, chatId, hook, bot } = await botWithWebhook();
  await updateBot(bot.id, { webhook_url: null });
  await say(token, chatId, 'nobody listens');
  await sleep(800); // none may come, and nothing marks when one would have (the dispatcher's queue is not readable here)
  expect(hook.hits).toEqual([]);
});

test('the echo bot of the local stack answers text and photos through the Bot API and realtime: typing, then a reply streamed by edits', async () => {
  const demo = JSON.parse(readFileSync(join(process.env.DATA_DIR as string, 'demo-bot.json'), 'utf8')) as DemoBot;
  const session = await newSession(demo.client_key);
  const token = session.session_token;
  const chat = await call('POST', '/api/client/chats', { token, json: { name: 'echo' } });
  const live = await liveClient(realtimeOf(session));
  try {
    await say(token, chat.body.id, 'ping');
    const reply = await live.waitFor((d) => d.data?.sender_type === 'outcoming' && d.data.content === 'You said: ping', 10_000);
    expect(reply.data).toMatchObject({ sender: 'bot', chat_id: chat.body.id, is_edited: true });
    // Typing first, then the first words, then the edits, in that order, all one message.
    const kinds = live.publications.filter((d) => d.type === 'action' ? d.data.action === 'typing' : d.data.sender_type === 'outcoming');
    expect(kinds[0]).toEqual({ type: 'action', data: { action: 'typing', chat_id: chat.body.id, sender: 'bot' } });
    expect(new Set(kinds.slice(1).map((d) => d.data.id))).toEqual(new Set([reply.data.id]));
    expect(kinds.slice(1).map((d) => d.data.content)).toEqual(['You', 'You said:', 'You said: ping']);
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.from('PNG!')], { type: 'image/png' }), 'cat.png');
    const file = await call('POST', '/api/client/files', { token, body: fd });
    await call('POST', `/api/client/chats/${chat.body.id}/messages`, { token, json: { content: '', content_type: 'photo', files: [file.body.id] } });
    await live.waitFor((d) => d.data?.sender_type === 'outcoming' && d.data.content === 'Nice photo! I got cat.png (4 bytes).', 10_000);
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(2);
  } finally {
    live.close();
  }
});
