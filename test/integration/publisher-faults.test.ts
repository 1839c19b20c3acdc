// Publisher + local stream poller under faults, on a table of its own in DynamoDB Local: a failing post is
// retried and delivered once it recovers, in order, nothing lost; a record that never succeeds goes to the
// dead-letter file after the bounded retries and does not hold back the records after it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../lib/local/resources';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand } from '@aws-sdk/client-dynamodb-streams';
import { refusalStatus, startStreamPoller, type StreamPoller } from '../../lib/local/stream-poller';
import { PUBLISHER, STREAM_DELIVERY } from '../../lib/consumers';
import { ROOT } from '../support/local-process';
import { freePort } from '../support/ports';
import { jsonLines } from '../support/jsonl';
import type { DeadLetter } from '../../lib/local/dead-letters';
import { until } from '../support/realtime';
import { textMessage } from '../support/fixtures';

// This file's own table and a fake @connections API; set before any lambdas/ module reads its config.
const table = `faults-${Date.now()}`;
process.env.TABLE_NAME = table;

let server: Server;
let poller: StreamPoller;
let deadLetterDir: string;
/** Per connection id: how to answer, and what arrived. */
const behaviour = new Map<string, { failFirst: number; status?: number }>();
const received = new Map<string, string[]>();
const attempts = new Map<string, number>();
/** What the poller said (shown when a test fails). */
const pollerLog: string[] = [];

beforeAll(async () => {
  // The publisher logs each injected failure; expected here, so kept out of the test output.
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
  const port = await freePort();
  process.env.WS_MANAGEMENT_ENDPOINT = `http://127.0.0.1:${port}`;
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const id = decodeURIComponent((req.url ?? '').split('/').pop() ?? '');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const n = (attempts.get(id) ?? 0) + 1;
    attempts.set(id, n);
    const b = behaviour.get(id) ?? { failFirst: 0 };
    if (n <= b.failFirst) {
      // 429 is how the @connections API says a socket's post rate was exceeded.
      const [status, type] = b.status === 429 ? [429, 'LimitExceededException'] : [500, 'InternalServerErrorException'];
      res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
      return res.end('{"message":"injected failure"}');
    }
    received.set(id, [...(received.get(id) ?? []), Buffer.concat(chunks).toString()]);
    res.writeHead(200);
    res.end();
  };
  server = createServer((req, res) => void serve(req, res));
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
    checkpointFile: join(deadLetterDir, 'stream-checkpoints.json'),
    log: (line) => void pollerLog.push(line),
  });
});

afterAll(async () => {
  await poller?.stop();
  await new Promise((r) => server?.close(r));
  rmSync(deadLetterDir, { recursive: true, force: true });
});

/** A user with a chat whose channel has one subscribed (fake) connection, and any others given. */
async function setup(connectionId: string, failFirst: number, others: { id: string; failFirst: number; status?: number }[] = []) {
  const { createBot } = await import('../../lambdas/flows/bot-admin');
  const { findOrCreateUser } = await import('../../lambdas/entities/users');
  const { createChat } = await import('../../lambdas/flows/chats');
  const { subscribe } = await import('../../lambdas/centrifuge/hub');
  const { userChannel } = await import('../../lambdas/centrifuge/channels');
  const { bot } = await createBot({ name: 'faults' });
  const user = await findOrCreateUser(bot.id, `u-${connectionId}`, {});
  const chat = await createChat({ userId: user.id, botId: bot.id, externalId: user.external_id }, { name: 'c' });
  behaviour.set(connectionId, { failFirst });
  const bound = { userId: user.id, exp: Math.floor(Date.now() / 1000) + 3600 };
  await expect(subscribe(connectionId, userChannel(user.id), bound)).resolves.toBeUndefined(); // subscribed (a refusal throws)
  for (const other of others) {
    behaviour.set(other.id, other);
    await expect(subscribe(other.id, userChannel(user.id), bound)).resolves.toBeUndefined();
  }
  const { createMessage } = await import('../../lambdas/flows/send');
  const say = async (content: string) =>
    (await createMessage(textMessage({ userId: user.id, botId: bot.id, chatId: chat.id }, content))).item;
  const { listChats } = await import('../../lambdas/flows/chats');
  const unread = async () => (await listChats(user.id))[0].unread_msg_by_user;
  return { say, unread };
}

/** A stream batch's dead-letter body, as far as the test reads it: the batch's range. */
type StreamBatchBody = { DDBStreamBatchInfo: Record<string, unknown> };
/** A post to a socket: the Centrifugo push of a publication, whose data is the message. */
type PushFrame = { push: { pub: { data: { data: { content: string } } } } };
const contents = (id: string) => (received.get(id) ?? []).map((f) => (JSON.parse(f) as PushFrame).push.pub.data.data.content);

// The SDK itself retries a 500 twice within one invocation; failing 5 posts forces the poller to redeliver.
test('a failing post is retried and delivered once it recovers; order kept; nothing lost; each message counted once', async () => {
  const { say, unread } = await setup('flaky=', 5);
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
  // Each record was delivered to the publisher again and again until its post went through: counted once.
  expect(await unread()).toBe(3);
}, 90_000);

// A throttled post is retried by the SDK within the invocation: the record does not fail, so no subscriber
// gets the message twice.
test('a post throttled with 429 is retried at once; each subscriber of the channel gets the message exactly once', async () => {
  const { say } = await setup('steady=', 0, [{ id: 'busy=', failFirst: 1, status: 429 }]);
  await say('throttled once');
  await until(() => contents('busy=').length >= 1 && contents('steady=').length >= 1, 15_000, 'both deliveries');
  // A failed record would be delivered again before the next one of the chat: the next one marks the end.
  await say('the next one');
  await until(() => contents('busy=').length >= 2 && contents('steady=').length >= 2, 15_000, 'the next message on both');
  expect(attempts.get('busy=')).toBe(3);
  expect(contents('busy=')).toEqual(['throttled once', 'the next one']);
  expect(contents('steady=')).toEqual(['throttled once', 'the next one']);
}, 45_000);

test('a record that keeps failing goes to the dead-letter file after the bounded retries; later records flow', async () => {
  const { say } = await setup('broken=', Number.MAX_SAFE_INTEGER);
  const doomed = await say('doomed');
  const file = join(deadLetterDir, 'publisher.jsonl');
  await until(() => jsonLines(file).length > 0, 30_000, 'the dead-letter file');
  const lines = jsonLines<DeadLetter>(file);
  expect(lines).toHaveLength(1);
  expect(lines[0].records?.[0].dynamodb?.NewImage?.id.S).toBe(doomed.id);
  expect((lines[0].body as StreamBatchBody).DDBStreamBatchInfo).toMatchObject({ batchSize: 1, startSequenceNumber: lines[0].records?.[0].dynamodb?.SequenceNumber });
  // One first delivery and the bounded retries, each trying the post (the SDK adds its own retries).
  expect(attempts.get('broken=')).toBeGreaterThanOrEqual(STREAM_DELIVERY.retryAttempts + 1);
  expect(contents('broken=')).toEqual([]);
  // The endpoint recovers: the next record is delivered; the doomed one stays in the dead-letter file.
  behaviour.set('broken=', { failFirst: 0 });
  await say('after the outage');
  await until(() => contents('broken=').includes('after the outage'), 15_000, 'the next record');
}, 60_000);

// The poller's own DynamoDB Streams calls: a refused one carries its status (a 4xx iterator is replaced, a
// failure without a reply is retried as it was) and DynamoDB's reason.
test('stream calls: a refused call has its 4xx status and DynamoDB\'s reason; an unreachable endpoint is status 0', async () => {
  const region = process.env.AWS_REGION as string;
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const local = new DynamoDBStreamsClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region, credentials, maxAttempts: 1 });
  const refused = await local.send(new GetRecordsCommand({ ShardIterator: 'not-an-iterator' })).catch((e: unknown) => e);
  expect(refusalStatus(refused)).toBeGreaterThanOrEqual(400);
  expect(refusalStatus(refused)).toBeLessThan(500);
  expect((refused as Error).name).toMatch(/\w+Exception$/);
  const closed = new DynamoDBStreamsClient({ endpoint: `http://127.0.0.1:${await freePort()}`, region, credentials, maxAttempts: 1 });
  const down = await closed.send(new DescribeStreamCommand({ StreamArn: 'x' })).catch((e: unknown) => e);
  expect(down).toBeInstanceOf(Error);
  expect(refusalStatus(down)).toBe(0);
  local.destroy();
  closed.destroy();
});
