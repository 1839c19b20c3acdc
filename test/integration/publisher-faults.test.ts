// Publisher + local stream poller under faults, on a table of its own in DynamoDB Local: a failing post is
// retried and delivered once it recovers, in order, nothing lost; a record that never succeeds goes to the
// dead-letter file after the bounded retries and does not hold back the records after it.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../lib/local/resources';
import { startStreamPoller, streamsCall, StreamsCallError, type StreamPoller } from '../../lib/local/stream-poller';
import { PUBLISHER, STREAM_DELIVERY } from '../../lib/routes';
import { ROOT } from '../support/local-process';
import { freePort } from '../support/ports';
import { jsonLines } from '../support/jsonl';
import { until } from '../support/realtime';

// This file's own table and a fake @connections API; set before any lambdas/core module reads its config.
const table = `faults-${Date.now()}`;
process.env.TABLE_NAME = table;

let server: Server;
let poller: StreamPoller;
let deadLetterDir: string;
/** Per connection id: how to answer, and what arrived. */
const behaviour = new Map<string, { failFirst: number }>();
const received = new Map<string, string[]>();
const attempts = new Map<string, number>();
/** What the poller said (shown when a test fails). */
const pollerLog: string[] = [];

beforeAll(async () => {
  // The publisher logs each injected failure; expected here, so kept out of the test output.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const port = await freePort();
  process.env.WS_MANAGEMENT_ENDPOINT = `http://127.0.0.1:${port}`;
  server = createServer(async (req, res) => {
    const id = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const n = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, n);
    const b = behaviour.get(id) ?? { failFirst: 0 };
    if (n <= b.failFirst) {
      res.writeHead(500, { 'content-type': 'application/json', 'x-amzn-errortype': 'InternalServerErrorException' });
      return res.end('{"message":"injected failure"}');
    }
    received.set(id, [...(received.get(id) ?? []), Buffer.concat(chunks).toString()]);
    res.writeHead(200);
    res.end();
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const ddb = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: process.env.AWS_REGION });
  await ensureTable(ddb, table);
  ddb.destroy();
  deadLetterDir = mkdtempSync(join(tmpdir(), 'dlq-'));
  poller = await startStreamPoller({
    endpoint: process.env.DYNAMODB_ENDPOINT as string,
    region: process.env.AWS_REGION as string,
    tableName: table,
    root: ROOT,
    consumers: [PUBLISHER],
    deadLetterDir,
    log: (line) => void pollerLog.push(line),
  });
});

afterAll(async () => {
  await poller?.stop();
  await new Promise((r) => server?.close(r));
  rmSync(deadLetterDir, { recursive: true, force: true });
});

/** A user with a chat whose channel has one subscribed (fake) connection. */
async function setup(connectionId: string, failFirst: number) {
  const { createBot } = await import('../../lambdas/core/bots');
  const { findOrCreateUser } = await import('../../lambdas/core/users');
  const { createChat } = await import('../../lambdas/core/chats');
  const { subscribe } = await import('../../lambdas/core/realtime');
  const { userChannel } = await import('../../lambdas/core/channels');
  const { bot } = await createBot({ name: 'faults' });
  const user = await findOrCreateUser(bot.id, `u-${connectionId}`, {});
  const chat = await createChat({ userId: user.id, botId: bot.id, externalId: user.external_id }, { name: 'c' });
  behaviour.set(connectionId, { failFirst });
  expect(await subscribe(connectionId, userChannel(user.id), user.id)).toBe('ok');
  const { createMessage } = await import('../../lambdas/core/messages');
  const say = async (content: string) =>
    (await createMessage({ userId: user.id, botId: bot.id, chatId: chat.id, content, content_type: 'text', files: [], sender: 'bot' })).item;
  return { say };
}

const contents = (id: string) => (received.get(id) ?? []).map((f) => JSON.parse(f).push.pub.data.data.content as string);

// The SDK itself retries a 500 twice within one invocation; failing 5 posts forces the poller to redeliver.
test('a failing post is retried and delivered once it recovers; order kept; nothing lost', async () => {
  const { say } = await setup('flaky=', 5);
  const sent: string[] = [];
  for (const text of ['one', 'two', 'three']) sent.push((await say(text)).content);
  await until(() => contents('flaky=').length >= 3, 45_000, 'three deliveries').catch((err: Error) => {
    throw new Error(`${err.message}; posts tried: ${attempts.get('flaky=') ?? 0}, delivered: ${JSON.stringify(contents('flaky='))}; poller: ${pollerLog.join(' | ')}`);
  });
  // At-least-once: a redelivered record may post again; the client dedupes by id. Order is kept.
  const seen = contents('flaky=');
  expect([...new Set(seen)]).toEqual(sent);
  expect(seen.length).toBeLessThanOrEqual(sent.length + 1);
  expect(attempts.get('flaky=')).toBeGreaterThanOrEqual(6);
}, 90_000);

test('a record that keeps failing goes to the dead-letter file after the bounded retries; later records flow', async () => {
  const { say } = await setup('broken=', Number.MAX_SAFE_INTEGER);
  const doomed = await say('doomed');
  const file = join(deadLetterDir, 'publisher.jsonl');
  await until(() => jsonLines(file).length > 0, 30_000, 'the dead-letter file');
  const lines = jsonLines(file);
  expect(lines).toHaveLength(1);
  expect(lines[0].record.dynamodb.NewImage.id.S).toBe(doomed.id);
  // One first delivery and the bounded retries, each trying the post (the SDK adds its own retries).
  expect(attempts.get('broken=')).toBeGreaterThanOrEqual(STREAM_DELIVERY.retryAttempts + 1);
  expect(contents('broken=')).toEqual([]);
  // The endpoint recovers: the next record is delivered; the doomed one stays in the dead-letter file.
  behaviour.set('broken=', { failFirst: 0 });
  await say('after the outage');
  await until(() => contents('broken=').includes('after the outage'), 15_000, 'the next record');
}, 60_000);

// The benchmark pauses the poller while it times handlers: nothing is read meanwhile, nothing is skipped.
test('a paused poller reads nothing; on resume it delivers what was written meanwhile, in order', async () => {
  const { say } = await setup('paused=', 0);
  await say('before');
  await until(() => contents('paused=').length === 1, 15_000, 'the first delivery');
  await poller.pause();
  try {
    for (const text of ['one', 'two']) await say(text);
    // Unpaused, the poller reads every 10 ms and posts within a few more.
    await new Promise((r) => setTimeout(r, 500));
    expect(contents('paused=')).toEqual(['before']);
  } finally {
    poller.resume();
  }
  await until(() => contents('paused=').length >= 3, 15_000, 'the deliveries after resume');
  expect(contents('paused=')).toEqual(['before', 'one', 'two']);
}, 45_000);

// The poller's own DynamoDB Streams calls: a refused one carries its status (a 4xx iterator is replaced, a
// failure without a reply is retried as it was) and DynamoDB's reason.
test('stream calls: a refused call says why with its 4xx status; an unreachable endpoint is status 0', async () => {
  const endpoint = new URL(process.env.DYNAMODB_ENDPOINT as string);
  const region = process.env.AWS_REGION as string;
  const refused = await streamsCall(endpoint, region, 'GetRecords', { ShardIterator: 'not-an-iterator' }).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(StreamsCallError);
  expect((refused as StreamsCallError).status).toBeGreaterThanOrEqual(400);
  expect((refused as StreamsCallError).status).toBeLessThan(500);
  expect((refused as StreamsCallError).message).toMatch(/^GetRecords: \w+Exception/);
  const closed = new URL(`http://127.0.0.1:${await freePort()}`);
  const down = await streamsCall(closed, region, 'DescribeStream', { StreamArn: 'x' }).catch((e: unknown) => e);
  expect(down).toBeInstanceOf(StreamsCallError);
  expect((down as StreamsCallError).status).toBe(0);
});
