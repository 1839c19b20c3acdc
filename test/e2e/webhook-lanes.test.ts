// One bot whose webhook receiver hangs cannot hold up another's: with the deliverer's concurrency small, a fast
// bot's webhooks arrive (p95) within 1 s of when they arrive with no slow bot beside it, and the hung bot's jobs
// still end in the dead-letter queue after their retries. Its own stack: two deliverer invocations on the fast lane
// and six on the slow one (each of the hung bot's jobs runs at once, so they drain in two timeouts), a 3 s
// webhook timeout, one retry.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackEnv, startOwnStack, type LocalProcess } from '../support/local-process';
import { call } from '../support/http';
import { freePort } from '../support/ports';
import { jsonLines } from '../support/jsonl';
import { until, untilTime } from '../support/wait';
import type { DeadLetter } from '../../lib/local/dead-letters';

const TIMEOUT_MS = 3000;
let stack: LocalProcess;
let dir: string;
const servers: Server[] = [];

/** A receiver that answers 200 at once, or never ('hang'); it records when each delivery arrived. */
async function receiver(mode: 'answer' | 'hang') {
  const hits: { id: string; at: number }[] = [];
  let closed = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({ id: String(req.headers['x-webhook-id']), at: Date.now() });
      if (mode === 'answer') res.writeHead(200).end();
      else req.socket.once('close', () => closed++);
    });
  });
  servers.push(server);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${port}/hook`, hits, closed: () => closed };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-lanes-'));
  const env = await stackEnv(dir, {
    ECHO_BOT: 'off',
    REALTIME: 'off',
    BOT_CACHE_TTL_MS: '0',
    WEBHOOK_CONCURRENCY: '2',
    WEBHOOK_SLOW_CONCURRENCY: '6',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_DELAYS: '1',
    RATE_MESSAGES_PER_MINUTE: '1000',
  });
  stack = await startOwnStack(env);
}, 60_000);
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A bot with its webhook at `url`, and a user's chat with it; `say` sends a message and returns its id. */
async function botAt(url: string) {
  const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
  const { bot } = await createBot({ name: 'lanes' });
  await updateBot(bot.id, { webhook_url: url });
  const session = await call<{ session_token: string }>('POST', '/api/client/session', { base: stack.apiUrl, json: { client_key: bot.client_key } });
  const token = session.body.session_token;
  const chat = await call<{ id: string }>('POST', '/api/client/chats', { base: stack.apiUrl, token, json: { name: 'lanes' } });
  return {
    say: async (content: string) => {
      const sent = await call<{ id: string }>('POST', `/api/client/chats/${chat.body.id}/messages`, { base: stack.apiUrl, token, json: { content } });
      expect(sent.status).toBe(201);
      return sent.body.id;
    },
  };
}

const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.95) - 1];

/** Sends `n` messages of the fast bot (each after `before(i)`), and the ms from each send to its delivery. */
async function fastLatencies(n: number, before: (i: number) => Promise<unknown> = () => Promise.resolve()): Promise<number[]> {
  const fast = await receiver('answer');
  const bot = await botAt(fast.url);
  const sent: { id: string; at: number }[] = [];
  for (let i = 0; i < n; i++) {
    await before(i);
    const at = Date.now();
    sent.push({ id: await bot.say(`fast ${i}`), at });
  }
  await until(() => fast.hits.length >= n, 30_000, 'every fast webhook');
  return sent.map((s) => fast.hits.find((h) => h.id === s.id)!.at - s.at);
}

test("a bot whose receiver hangs does not delay another bot's webhooks; its own go to the dead-letter queue", async () => {
  // 8 a run: the p95 of 8 is the slowest of them, so a hung job ahead of any one fails it.
  const baseline = await fastLatencies(8);

  const hung = await receiver('hang');
  const slow = await botAt(hung.url);
  const slowIds: string[] = [];
  const saySlow = async () => slowIds.push(await slow.say(`slow ${slowIds.length}`));
  // The hung bot's first deliveries run to the timeout; then its jobs keep coming, one before each of the first
  // half of the fast bot's messages (in the second half, its retries are on their way to the dead-letter queue).
  for (let i = 0; i < 2; i++) await saySlow();
  await until(() => hung.closed() >= 1, 10_000, 'a hung delivery to time out');
  const beside = await fastLatencies(8, async (i) => i < 4 && saySlow());

  expect(p95(beside)).toBeLessThanOrEqual(p95(baseline) + 1000);
  // Every job of the hung bot was tried (first attempt and its one retry), then dead-lettered as without a slow lane.
  const dead = () => jsonLines<DeadLetter & { body: { message?: { id: string }; attempt: number; reason: string } }>(join(dir, 'dead-letter', 'webhooks_dlq.jsonl'));
  await until(() => slowIds.every((id) => dead().some((d) => d.body.message?.id === id)), 15_000, "the hung bot's dead letters");
  for (const d of dead()) {
    expect(d.body).toMatchObject({ attempt: 1, reason: expect.stringMatching(/timed out/), url: hung.url });
    expect(d.body).not.toHaveProperty('lane'); // the job as first queued, whichever lane failed it
  }
  expect(dead()).toHaveLength(slowIds.length);
  // Each twice (the first attempt and the one retry), with its message's id.
  expect(slowIds.map((id) => hung.hits.filter((h) => h.id === id).length)).toEqual(slowIds.map(() => 2));
}, 60_000);

test('a bot leaves the slow lane when its mark expires', async () => {
  const { markSlow } = await import('../../lambdas/entities/slow-webhooks');
  const { laneOf } = await import('../../lambdas/flows/webhook-lanes');
  const botId = `lanes-${Date.now()}`;
  expect(await laneOf(botId)).toBe('fast');
  const before = Date.now();
  await markSlow(botId, 1);
  expect(await laneOf(botId)).toBe('slow');
  await untilTime((Math.floor(before / 1000) + 2) * 1000, 'the mark to expire');
  expect(await laneOf(botId)).toBe('fast');
});
