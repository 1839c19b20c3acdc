// The echo bot as a model bot: behind a fault proxy in front of the real HTTP gateway (503 and 429 with
// Retry-After, replies cut off after the write landed, connections reset), each reply lands once and whole; its
// keywords ask interactive messages, and each answer, delivered twice, gets its words once.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { apiUrl, call, userWithChat } from '../support/api';
import { freePort } from '../support/ports';
import { until } from '../support/realtime';
import { firstFileUrl, type Message } from '../support/contract';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { botApiCall, startEchoBot } from '../../examples/echo-bot';
import { CARD_PHOTO } from '../../examples/echo-bot-interactive';

type Fault = 'forward' | 'drop-reply' | 'reset' | { status: 429 | 503; retryAfter?: string };

interface Seen {
  method: string;
  path: string;
  key?: string;
  body: string;
  fault: Fault;
  upstream?: number;
}

/** A proxy to the stack's gateway: `plan(request, its attempt number for this method and path)` picks a fault. */
async function faultProxy(plan: (method: string, path: string, attempt: number) => Fault) {
  const seen: Seen[] = [];
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const method = req.method as string;
    const path = (req.url as string).replace(/\/\d{19}$/, '/{id}').replace(/chats\/[^/]+/, 'chats/{chat}');
    const attempt = seen.filter((s) => s.method === method && s.path === path && s.body === body.toString()).length + 1;
    const fault = plan(method, path, attempt);
    const entry: Seen = { method, path, key: req.headers['idempotency-key'] as string | undefined, body: body.toString(), fault };
    seen.push(entry);
    if (fault === 'reset') return req.socket.destroy();
    if (typeof fault === 'object') {
      res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.retryAfter !== undefined && { 'retry-after': fault.retryAfter }) });
      return res.end(JSON.stringify({ error: 'injected' }));
    }
    const target = new URL(req.url as string, apiUrl());
    const relay = async (upRes: IncomingMessage) => {
      const out: Buffer[] = [];
      for await (const c of upRes) out.push(c as Buffer);
      entry.upstream = upRes.statusCode;
      // The write landed; its reply never reaches the bot.
      if (fault === 'drop-reply') return req.socket.destroy();
      res.writeHead(upRes.statusCode as number, upRes.headers);
      res.end(Buffer.concat(out));
    };
    const up = request(target, { method, headers: { ...req.headers, host: target.host } }, (upRes) => void relay(upRes));
    up.end(body);
  };
  const server: Server = createServer((req, res) => void serve(req, res));
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const closers: (() => void)[] = [];
afterAll(() => closers.forEach((c) => c()));

test('under 503s, 429s, lost replies and resets the echo bot retries with the same key: one reply, whole, in the history', async () => {
  let edits = 0;
  const proxy = await faultProxy((method, path, attempt) => {
    const is = (m: string, p: string) => method === m && path.endsWith(p);
    if (is('POST', '/typing')) return attempt === 1 ? { status: 503, retryAfter: '1' } : 'forward';
    if (is('POST', '/messages')) return attempt === 1 ? { status: 503, retryAfter: '1' } : attempt === 2 ? 'drop-reply' : 'forward';
    if (!is('PATCH', '/messages/{id}') || attempt > 1) return 'forward';
    // The first try of each edit: its reply lost after it applied, the connection reset before it, a 429 with no Retry-After.
    const faults: Fault[] = ['drop-reply', 'reset', { status: 429 }];
    return faults[edits++];
  });
  closers.push(proxy.close);
  const { bot, secretKey, token, chatId } = await userWithChat();
  const port = await freePort();
  const { bot: hooked } = await updateBot(bot.id, { webhook_url: `http://127.0.0.1:${port}/webhook` });
  const lines: string[] = [];
  const echo = await startEchoBot({ port, apiUrl: proxy.url, secretKey, webhookSecret: hooked.webhook_secret as string, thinkMs: 0, streamStepMs: 0, log: (l) => lines.push(l) });
  closers.push(() => {
    echo.closeAllConnections(); // the stack's deliverer keeps its connection alive
    echo.close();
  });

  const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'hello reliable world' } });
  expect(sent.status).toBe(201);
  const replies = async () => (await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body.filter((m) => m.sender_type === 'outcoming');
  await until(async () => (await replies()).some((m) => m.content === 'You said: hello reliable world'), 30_000, 'the whole reply');

  const [reply, ...more] = await replies();
  expect(more).toEqual([]);
  expect(reply).toMatchObject({ content: 'You said: hello reliable world', is_edited: true, sender: 'bot' });
  // Each step was tried again after its fault: the send three times with one key, landing on the second.
  const sends = proxy.seen.filter((s) => s.method === 'POST' && s.path.endsWith('/messages'));
  expect(sends.map((s) => [s.fault, s.upstream])).toEqual([[{ status: 503, retryAfter: '1' }, undefined], ['drop-reply', 201], ['forward', 200]]);
  expect(new Set(sends.map((s) => s.key))).toEqual(new Set([`echo-reply-${sent.body.id}`]));
  const patches = proxy.seen.filter((s) => s.method === 'PATCH');
  expect(patches.map((s) => [(JSON.parse(s.body) as { version: number }).version, s.fault, s.upstream])).toEqual([
    [1, 'drop-reply', 200],
    [1, 'forward', 200],
    [2, 'reset', undefined],
    [2, 'forward', 200],
    [3, { status: 429 }, undefined],
    [3, 'forward', 200],
  ]);
  expect(proxy.seen.filter((s) => s.path.endsWith('/typing')).map((s) => s.upstream)).toEqual([undefined, 200]);
  expect(lines).toEqual([]);
});

test('the same edit sent again (its reply lost) is a 200 and writes nothing; another content under that number is a 409', async () => {
  const { secretKey, chatId, token } = await userWithChat();
  const api = { apiUrl: apiUrl(), secretKey };
  const sent = await botApiCall(api, 'POST', `/chats/${chatId}/messages`, { content: 'v0' }, 'edit-test');
  const path = `/chats/${chatId}/messages/${sent.body.id}`;
  const first = await botApiCall(api, 'PATCH', path, { content: 'v1', version: 1 });
  const again = await botApiCall(api, 'PATCH', path, { content: 'v1', version: 1 });
  expect([first.status, again.status]).toEqual([200, 200]);
  expect(again.body).toEqual(first.body);
  expect((await botApiCall(api, 'PATCH', path, { content: 'other', version: 1 })).status).toBe(409);
  const history = (await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body;
  expect(history.map((m) => m.content)).toEqual(['v1']);
});

test('retries are bounded: a write that keeps getting 503 is given up after the policy\'s attempts', async () => {
  const proxy = await faultProxy(() => ({ status: 503, retryAfter: '0' }));
  closers.push(proxy.close);
  const { secretKey, chatId, token } = await userWithChat();
  const r = await botApiCall({ apiUrl: proxy.url, secretKey }, 'POST', `/chats/${chatId}/messages`, { content: 'never' }, 'k-1', { attempts: 3, baseMs: 1, maxWaitMs: 10 });
  expect(r.status).toBe(503);
  expect(proxy.seen.map((s) => s.key)).toEqual(['k-1', 'k-1', 'k-1']);
  expect((await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body).toEqual([]);
});

/**
 * A webhook address in front of the echo bot: every delivery reaches the bot, but the first of each answer
 * (X-Webhook-Id `<message id>:response`) is then refused with a 500, so the service delivers it again.
 */
async function redeliveringHook(echoPort: number) {
  const deliveries: { id: string; botStatus: number }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(['content-type', 'x-webhook-id', 'x-webhook-timestamp', 'x-webhook-signature'].map((h) => [h, String(req.headers[h])]));
      void fetch(`http://127.0.0.1:${echoPort}/webhook`, { method: 'POST', headers, body: Buffer.concat(chunks) }).then((bot) => {
        const id = headers['x-webhook-id'];
        const again = deliveries.some((d) => d.id === id);
        deliveries.push({ id, botStatus: bot.status });
        res.writeHead(id.endsWith(':response') && !again ? 500 : bot.status);
        res.end();
      });
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${port}/webhook`, deliveries };
}

test('menu, card, form and rate ask interactive messages; each answer, its webhook delivered twice, gets its words once; other text is echoed', async () => {
  const proxy = await faultProxy(() => 'forward');
  closers.push(proxy.close);
  const { bot, token, chatId, secretKey } = await userWithChat();
  const port = await freePort();
  const hook = await redeliveringHook(port);
  const { bot: hooked } = await updateBot(bot.id, { webhook_url: hook.url });
  const lines: string[] = [];
  const echo = await startEchoBot({ port, apiUrl: proxy.url, secretKey, webhookSecret: hooked.webhook_secret as string, thinkMs: 0, streamStepMs: 0, log: (l) => lines.push(l) });
  closers.push(() => {
    echo.closeAllConnections();
    echo.close();
  });
  const history = async () => (await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body.filter((m) => m.sender_type === 'outcoming');
  const say = async (content: string) => expect((await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content } })).status).toBe(201);

  for (const word of ['menu', 'Card', 'form', ' rate ', 'menus']) await say(word);
  const asked = (replies: Message[], type: string) => replies.find((m) => m.content_type === type);
  await until(async () => {
    const replies = await history();
    return ['input_select', 'cards', 'form', 'input_csat'].every((t) => asked(replies, t)) && replies.some((m) => m.content === 'You said: menus');
  }, 15_000, 'the four interactive messages and the echo');
  const replies = await history();
  const [menu, card, form, rate] = ['input_select', 'cards', 'form', 'input_csat'].map((t) => asked(replies, t) as Message);
  expect(replies).toHaveLength(5);
  expect(menu).toMatchObject({
    content: 'What would you like to drink?',
    content_attributes: { items: [{ title: 'Tea', value: 'tea' }, { title: 'Coffee', value: 'coffee' }, { title: 'Juice', value: 'juice' }] },
  });
  // The card's photo is a file of the chat, attached to the card's message: the user's download is the bot's PNG.
  const photo = (card.files ?? [])[0];
  expect(card.files).toHaveLength(1);
  expect(photo).toMatchObject({ type: 'photo', name: 'echo-bot.png' });
  expect(card.content_attributes).toEqual({
    items: [
      {
        title: 'The echo bot',
        description: expect.any(String),
        media_url: photo.id,
        actions: [
          { type: 'link', text: 'Read the API docs', uri: `${proxy.url}/docs` },
          { type: 'postback', text: 'Say hello', payload: 'hello' },
        ],
      },
    ],
  });
  expect(Buffer.from(await (await fetch(firstFileUrl(card))).arrayBuffer()).equals(CARD_PHOTO)).toBe(true);
  expect(form.content_attributes).toEqual({
    items: [
      { name: 'name', label: 'Name', type: 'text', required: true },
      { name: 'email', label: 'E-mail', type: 'email', required: true, placeholder: 'you@example.com' },
    ],
  });
  expect(rate).toMatchObject({ content: 'How did I do?', content_attributes: {} });

  const answers: [Message, object, string][] = [
    [menu, { value: 'coffee' }, 'You chose Coffee'],
    [card, { card: 0, payload: 'hello' }, 'You pressed Say hello (payload: hello)'],
    [form, { values: { name: 'Ann', email: 'ann@example.com' } }, 'Thanks, Ann (ann@example.com)'],
    [rate, { rating: 4, comment: 'Quick' }, 'Thanks for rating 4/5: "Quick"'],
  ];
  for (const [message, json] of answers) {
    expect((await call('POST', `/api/client/chats/${chatId}/messages/${message.id}/response`, { token, json })).status).toBe(200);
  }
  // Each answer's webhook comes twice (the first refused after the bot took it); the bot heard both.
  const delivered = (id: string) => hook.deliveries.filter((d) => d.id === `${id}:response`).map((d) => d.botStatus);
  await until(() => answers.every(([m]) => delivered(m.id).length === 2), 15_000, 'each message.response and its retry');
  expect(answers.map(([m]) => delivered(m.id))).toEqual(answers.map(() => [204, 204]));
  // A message after the retries is the mark: once its echo is whole, a reply to a retry would have begun.
  await say('bye');
  const words = async () => (await history()).filter((m) => m.content_type === 'text').map((m) => m.content);
  await until(async () => {
    const texts = await words();
    return texts.includes('You said: bye') && answers.every(([, , said]) => texts.includes(said));
  }, 15_000, 'the words for each answer');
  expect((await words()).sort()).toEqual(['You said: menus', 'You said: bye', ...answers.map(([, , said]) => said)].sort());
  // One send per answer reached the Bot API: the retries were dropped by their X-Webhook-Id, not by the key.
  const sends = (key: string) => proxy.seen.filter((s) => s.method === 'POST' && s.key === key);
  expect(answers.map(([m]) => sends(`echo-answer-${m.id}`).length)).toEqual([1, 1, 1, 1]);
  expect(lines).toEqual([]);
});
