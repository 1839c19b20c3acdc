// The js and ts blocks of the docs that run in Node (test/e2e/doc-snippets.test.ts): each with what a page or a
// server would give it, and what it says checked against the running stack.
import { createHmac } from 'node:crypto';
import * as nodeCrypto from 'node:crypto';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { createChatClient, memoryStorage, type ChatClientOptions } from '../../packages/client/src';
import { signWebhook } from '../../lambdas/adapters/webhooks';
import { apiUrl, call, newBot, newSession } from './api';
import { docBlocks } from './doc-blocks';
import { local, runNode } from './doc-run';
import { until } from './wait';

/** A bot, its user crm-42 (Ada) and a chat: what the README's walk-through leaves behind, for the blocks after it. */
export async function walkThrough() {
  const { bot, secretKey } = await newBot();
  const session = await newSession(bot.client_key, { external_id: 'crm-42', first_name: 'Ada' });
  const chat = await call('POST', '/api/client/chats', { token: session.session_token, json: { name: 'Support' } });
  return { bot, secretKey, session, chatId: chat.body.id };
}

const BLOCKS = docBlocks();
export const block = (key: string) => {
  const b = BLOCKS.find((x) => x.key === key);
  if (!b) throw new Error(`no block ${key}`);
  return b;
};
export const asBot = (secretKey: string) => ({ authorization: `Bearer ${secretKey}` });
/** The package as a page has it: a page gives it its WebSocket and localStorage; Node gets `ws` and a memory storage. */
const opened: { close(): void }[] = [];
const packageForNode = {
  createChatClient: (o: ChatClientOptions) => {
    const c = createChatClient({ WebSocket, storage: memoryStorage(), ...o });
    opened.push(c);
    return c;
  },
};
/** Closes the clients the blocks made (after each test). */
export const closeOpened = () => opened.splice(0).forEach((c) => c.close());

/** Each js/ts block run in Node, with what it needs, and what it says checked. */
export const NODE_RUNS: Record<string, () => Promise<void>> = {
  // The README's package example: the message is sent, and the bot's reply is logged as it arrives.
  'README.md js#0': async () => {
    const { bot, secretKey } = await newBot();
    const logs: unknown[][] = [];
    const b = block('README.md js#0');
    const { chat } = (await runNode({ ...b, code: local(b.code, bot) }, { console: { log: (...a: unknown[]) => logs.push(a) } }, { '@nexus-chat/client': packageForNode })) as { chat: { id: string } };
    const history = await call('GET', `/api/bot/chats/${chat.id}/messages`, { headers: asBot(secretKey) });
    expect(history.body.map((m) => [m.sender, m.content])).toEqual([['user', 'Hello!']]);
    await call('POST', `/api/bot/chats/${chat.id}/messages`, { headers: asBot(secretKey), json: { content: 'Hi Ada', sender: 'operator' } });
    await until(() => logs.some((l) => l[0] === 'operator' && l[1] === 'Hi Ada'), 10_000, 'the reply logged');
  },
  // The site's server hashes its user's id with the identity secret: the service takes that hash, not another.
  'docs/api.md js#0': async () => {
    const { bot } = await newBot({ identity_verification: true });
    const { external_id_hash } = await runNode(block('docs/api.md js#0'), { crypto: nodeCrypto, IDENTITY_SECRET: bot.identity_secret, user: { id: 'crm-42' } });
    const session = (hash: unknown) => call('POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: 'crm-42', external_id_hash: hash } });
    expect((await session(external_id_hash)).status).toBe(200);
    expect((await session(createHmac('sha256', 'another').update('crm-42').digest('hex'))).status).toBe(403);
  },
  // The receiver's check: the service's own signature passes; a changed body, an old timestamp or no signature fail.
  'docs/bot-api.md ts#0': async () => {
    const { verifyWebhook } = (await runNode(block('docs/bot-api.md ts#0'), {}, { 'node:crypto': nodeCrypto })) as { verifyWebhook: (s: string, body: string, t?: string, sig?: string) => boolean };
    const body = JSON.stringify({ event: 'message.created' });
    const now = String(Math.floor(Date.now() / 1000));
    const old = String(Math.floor(Date.now() / 1000) - 600);
    expect(verifyWebhook('whsec_x', body, now, signWebhook('whsec_x', now, body))).toBe(true);
    expect(verifyWebhook('whsec_x', body + ' ', now, signWebhook('whsec_x', now, body))).toBe(false);
    expect(verifyWebhook('whsec_x', body, old, signWebhook('whsec_x', old, body))).toBe(false);
    expect(verifyWebhook('whsec_x', body, now, undefined)).toBe(false);
  },
  // The package's live part: a reply and its edit land in `shown`, typing and the status are logged.
  'docs/realtime.md js#0': async () => {
    const { bot, secretKey } = await newBot();
    const logs: unknown[][] = [];
    const b = block('docs/realtime.md js#0');
    const { chat, shown } = (await runNode({ ...b, code: local(b.code, bot) }, { console: { log: (...a: unknown[]) => logs.push(a) } }, { '@nexus-chat/client': packageForNode })) as {
      chat: { id: string };
      shown: Map<string, string>;
    };
    await until(() => logs.some((l) => l[0] === 'realtime:' && l[1] === 'online'), 10_000, 'the status logged');
    await call('POST', `/api/bot/chats/${chat.id}/typing`, { headers: asBot(secretKey) });
    await until(() => logs.some((l) => l[0] === 'bot' && l[1] === 'is typing'), 10_000, 'the typing logged');
    const reply = (await call('POST', `/api/bot/chats/${chat.id}/messages`, { headers: asBot(secretKey), json: { content: 'Hi there' } })).body as { id: string };
    await until(() => shown.get(reply.id) === 'Hi there', 10_000, 'the reply shown');
    await call('PATCH', `/api/bot/chats/${chat.id}/messages/${reply.id}`, { headers: asBot(secretKey), json: { content: 'Hi there, edited' } });
    await until(() => shown.get(reply.id) === 'Hi there, edited', 10_000, 'the edit shown');
  },
  // Recovery by hand: the first subscribe reloads; after a drop, what was sent meanwhile comes back through apply()
  // with recovered: true, and nothing is reloaded.
  'docs/realtime.md js#1': async () => {
    const { session, chatId } = await walkThrough();
    const rt = session.realtime!;
    const client = new Centrifuge(rt.url, { token: rt.token, websocket: WebSocket, minReconnectDelay: 50, maxReconnectDelay: 200 });
    const applied: { type: string; data: { content?: string } }[] = [];
    let reloads = 0;
    const { sub } = (await runNode(block('docs/realtime.md js#1'), { client, session, reloadMessages: () => reloads++, apply: (d: (typeof applied)[0]) => applied.push(d) })) as {
      sub: { subscribe(): void; state: string; once(e: string, fn: (ctx: { recovered: boolean }) => void): void };
    };
    try {
      sub.subscribe();
      client.connect();
      await until(() => sub.state === 'subscribed', 10_000, 'the subscription');
      expect(reloads).toBe(1);
      // The socket drops; a message is sent before it is back.
      const back = new Promise<boolean>((r) => sub.once('subscribed', (ctx) => r(ctx.recovered)));
      client.disconnect();
      await call('POST', `/api/client/chats/${chatId}/messages`, { token: session.session_token, json: { content: 'while away' } });
      client.connect();
      expect(await back).toBe(true);
      expect(applied.filter((p) => p.type === 'message').map((p) => p.data.content)).toEqual(['while away']);
      expect(reloads).toBe(1);
    } finally {
      client.disconnect();
    }
  },
  // The echo bot's retry helper: a reply lands once, sent twice with one Idempotency-Key.
  'docs/reliable-bot.md ts#0': async () => {
    const { secretKey, chatId } = await walkThrough();
    const { botApiCall } = (await runNode(block('docs/reliable-bot.md ts#0'), { sleep: (ms: number) => new Promise((r) => setTimeout(r, ms)) })) as {
      botApiCall: (api: object, method: string, path: string, body: unknown, key?: string) => Promise<{ status: number; body: { id?: string } }>;
    };
    const send = () => botApiCall({ apiUrl: apiUrl(), secretKey }, 'POST', `/chats/${chatId}/messages`, { content: 'Your order has shipped.', sender: 'operator' }, 'order-1');
    const [first, again] = [await send(), await send()];
    expect(first.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    const history = await call('GET', `/api/bot/chats/${chatId}/messages`, { headers: asBot(secretKey) });
    expect(history.body.map((m) => m.content)).toEqual(['Your order has shipped.']);
  },
};
