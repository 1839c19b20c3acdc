// Publisher + local stream poller + its local FIFO redo queue under faults, on a table of its own in DynamoDB
// Local: a failing post is retried and delivered once it recovers, in order, nothing lost; a user whose records
// keep failing goes to the redo queue while every other user's publications go out once each, in order; once the
// fault clears its own arrive in order, counted once; a malformed record ends in the redo dead-letter file.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from '../../lib/local/resources';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand } from '@aws-sdk/client-dynamodb-streams';
import { refusalStatus, startStreamPoller, type StreamPoller } from '../../lib/local/stream-poller';
import { PUBLISHER, REDO_QUEUE } from '../../lib/consumers';
import { startLocalQueues, type LocalQueues } from '../../lib/local/sqs';
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
let queues: LocalQueues;
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
  // The publisher's redo queue, as the local stack runs it; a failed message shows again after 0.5 s, not 300 s.
  const sqsPort = await freePort();
  process.env.SQS_ENDPOINT = `http://127.0.0.1:${sqsPort}`;
  process.env.PUBLISHER_REDO_QUEUE_URL = `${process.env.SQS_ENDPOINT}/000000000000/publisher_redo`;
  queues = await startLocalQueues({
    host: '127.0.0.1',
    port: sqsPort,
    root: ROOT,
    deadLetterDir,
    journalDir: join(deadLetterDir, 'queues'),
    consumers: { publisher_redo: { def: PUBLISHER, queue: REDO_QUEUE, fifo: true } },
    log: (line) => void pollerLog.push(line),
    visibilityTimeoutMs: 500,
  });
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
  await queues?.stop();
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
  return { say, unread, user, chat };
}

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

test('one user\'s records keep failing: the others\' go out once each, in order; its own wait in the redo queue and arrive in order once the fault clears', async () => {
  const healthy = ['ok1=', 'ok2=', 'ok3=', 'ok4='];
  const users = await Promise.all([...healthy, 'down='].map((id) => setup(id, id === 'down=' ? Number.MAX_SAFE_INTEGER : 0)));
  // Every user's messages written side by side, round after round: batches with many users' records.
  const round = (n: number) => Promise.all(users.map((u, i) => u.say(`${[...healthy, 'down='][i]}${n}`)));
  for (const n of [1, 2, 3]) await round(n);
  const want = (id: string, n: number) => Array.from({ length: n }, (_, k) => `${id}${k + 1}`);
  await until(() => healthy.every((id) => contents(id).length >= 3), 30_000, 'the healthy users\' three').catch((err: Error) => {
    throw new Error(`${err.message}; got ${JSON.stringify(healthy.map(contents))}; poller: ${pollerLog.join(' | ')}`);
  });
  // While the broken user's posts fail, a later round: the shard is not held, the others' go out.
  await round(4);
  await until(() => healthy.every((id) => contents(id).length >= 4), 30_000, 'the healthy users\' fourth');
  for (const id of healthy) expect(contents(id)).toEqual(want(id, 4)); // exactly once each, in order
  expect(contents('down=')).toEqual([]);
  // Its records are held (the fourth round's too, behind the first three): the fault clears, they arrive in order.
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo } = await import('../../lambdas/aws/dynamo');
  const { keys } = await import('../../lambdas/entities/keys');
  const { userChannel } = await import('../../lambdas/centrifuge/channels');
  // The hold, in the channel's subscriptions partition (the publisher reads it with the sockets).
  const held = async () => (await dynamo.send(new GetCommand({ TableName: table, Key: keys.publisherHold(userChannel(users[4].user.id)), ConsistentRead: true }))).Item;
  expect(await held()).toMatchObject({ entity: 'stream_hold' });
  behaviour.set('down=', { failFirst: 0 });
  await until(() => contents('down=').length >= 4, 30_000, 'the broken user\'s four, redone').catch((err: Error) => {
    throw new Error(`${err.message}; got ${JSON.stringify(contents('down='))}; poller: ${pollerLog.join(' | ')}`);
  });
  expect(contents('down=')).toEqual(want('down=', 4));
  // Each counted once, though the count ran before every failed post; the hold is gone, the next goes straight.
  expect(await users[4].unread()).toBe(4);
  await until(async () => (await held()) === undefined, 10_000, 'the hold released');
  await users[4].say('down=5');
  await until(() => contents('down=').length >= 5, 15_000, 'the next one');
  expect(contents('down=')).toEqual(want('down=', 5));
  expect(jsonLines(join(deadLetterDir, 'publisher.jsonl'))).toEqual([]);
}, 90_000);

test('a malformed record ends in the redo dead-letter file with the record itself; its user\'s next records follow it', async () => {
  const { say, user, chat } = await setup('malformed=', 0);
  const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo } = await import('../../lambdas/aws/dynamo');
  // A message whose files are not a list: reading it for the publication throws, every time.
  const bad = { pk: `CHAT#${chat.id}`, sk: 'MSG#malformed', entity: 'message', id: 'malformed', user_id: user.id, bot_id: user.bot_id, chat_id: chat.id, files: 'not a list' };
  await dynamo.send(new PutCommand({ TableName: table, Item: bad }));
  await say('after it');
  const file = join(deadLetterDir, 'publisher_redo_dlq.jsonl');
  await until(() => jsonLines(file).length > 0, 30_000, 'the redo dead-letter file').catch((err: Error) => {
    throw new Error(`${err.message}; poller: ${pollerLog.join(' | ')}`);
  });
  const [letter, ...more] = jsonLines<DeadLetter>(file);
  expect(more).toEqual([]);
  expect(letter).toMatchObject({ condition: 'MaxReceiveCountExceeded', body: { lane: `nexus:user#${user.id}`, record: { dynamodb: { NewImage: { id: { S: 'malformed' } } } } } });
  await until(() => contents('malformed=').includes('after it'), 15_000, 'the next record');
  expect(contents('malformed=')).toEqual(['after it']);
}, 60_000);

test('an erased user\'s channel loses the publisher\'s hold with its sockets (the hold names the user)', async () => {
  const { user } = await setup('erased=', 0);
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo } = await import('../../lambdas/aws/dynamo');
  const { keys } = await import('../../lambdas/entities/keys');
  const { userChannel } = await import('../../lambdas/centrifuge/channels');
  const { holdChannel } = await import('../../lambdas/entities/stream-holds');
  const { closeUserConnections } = await import('../../lambdas/centrifuge/hub');
  const channel = userChannel(user.id);
  const item = async (key: { pk: string; sk: string }) => (await dynamo.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;
  await holdChannel(channel, '100');
  expect(await item(keys.publisherHold(channel))).toMatchObject({ entity: 'stream_hold' });
  await closeUserConnections(user.id);
  expect([await item(keys.publisherHold(channel)), await item(keys.subscription(channel, 'erased='))]).toEqual([undefined, undefined]);
});

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
