// How the functions' AWS SDK clients behave when AWS misbehaves, against a stand-in for AWS (DynamoDB Local
// behind it where a real table is needed): a message put whose reply is lost is retried without a second
// message, throttling is retried then answered 503, a dependency down is a 503 within seconds, and a rotated
// JWT secret takes over within its maximum age.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { jwtVerify } from 'jose';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { freePort } from '../support/ports';
import { sleep, until } from '../support/wait';

/** One request the stand-in received: the AWS operation (X-Amz-Target) and its JSON body. */
interface Seen {
  target: string;
  body: Record<string, unknown>;
}

type Behaviour = (req: Seen, raw: IncomingMessage, reply: (status: number, body: unknown, type?: string) => void) => Promise<void> | void;

let server: Server;
let standIn: string;
let behave: Behaviour;
const seen: Seen[] = [];
const localDynamo = process.env.DYNAMODB_ENDPOINT as string;
const startEnv = { ...process.env };
let dir: string;

beforeAll(async () => {
  const port = await freePort();
  standIn = `http://127.0.0.1:${port}`;
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString();
    const one: Seen = { target: String(req.headers['x-amz-target'] ?? ''), body: text ? (JSON.parse(text) as Seen['body']) : {} };
    seen.push(one);
    await behave(one, req, (status, body, type) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...(type && { 'x-amzn-errortype': type }) });
      res.end(JSON.stringify(body));
    });
  };
  server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  dir = mkdtempSync(join(tmpdir(), 'aws-clients-'));
  writeFileSync(join(dir, 'jwt-secret'), 'k'.repeat(48));
  // The SDK's notice about Node 22 (this machine runs 20) would crowd the output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  seen.length = 0;
  jest.resetModules();
  process.env = { ...startEnv };
});

/** The lambdas' modules loaded afresh with this environment (their clients are made at load, as on a cold start). */
function load<T extends object>(path: string, env: Record<string, string>): T {
  Object.assign(process.env, env);
  return jest.requireActual<T>(path);
}

/** Forwards a request to DynamoDB Local and returns its reply. */
async function forward(one: Seen, raw: IncomingMessage) {
  const res = await fetch(localDynamo, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': one.target, authorization: String(raw.headers.authorization) },
    body: JSON.stringify(one.body),
  });
  return { status: res.status, body: await res.json(), type: res.headers.get('x-amzn-errortype') ?? undefined };
}

const isMessagePut = (one: Seen) => one.target.endsWith('.PutItem') && JSON.stringify(one.body).includes('"entity":{"S":"message"}');

test('a message put that was written but whose reply was lost is retried: the refused retry finds its own item, one message, counted once', async () => {
  let dropped = false;
  behave = async (one, raw, reply) => {
    const answer = await forward(one, raw);
    if (isMessagePut(one) && !dropped) {
      dropped = true;
      raw.socket.destroy(); // DynamoDB wrote it; the reply never arrives
      return;
    }
    reply(answer.status, answer.body, answer.type);
  };
  const env = { DYNAMODB_ENDPOINT: standIn };
  const { createBot } = load<typeof import('../../lambdas/flows/bot-admin')>('../../lambdas/flows/bot-admin', env);
  const { findOrCreateUser } = load<typeof import('../../lambdas/entities/users')>('../../lambdas/entities/users', env);
  const { createChat } = load<typeof import('../../lambdas/flows/chats')>('../../lambdas/flows/chats', env);
  const { createMessage } = load<typeof import('../../lambdas/flows/send')>('../../lambdas/flows/send', env);
  const { bot } = await createBot({ name: 'lost reply' });
  const user = await findOrCreateUser(bot.id, 'lost-reply', {});
  const chat = await createChat({ userId: user.id, botId: bot.id }, { name: 'c' });

  const { item } = await createMessage({ userId: user.id, botId: bot.id, chatId: chat.id, content: 'once', content_type: 'text', files: [], sender: 'user' });

  // The SDK sent the same put again; DynamoDB refused it (the key was taken) and returned the item: ours.
  const attempts = seen.filter(isMessagePut);
  expect(attempts).toHaveLength(2);
  expect(attempts[1].body).toEqual(attempts[0].body);
  expect(attempts[0].body.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  // Read straight from DynamoDB Local: the chat's partition holds the one message, and the stream (the test
  // run's local stack on the same table) counts it once.
  const sdk = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: localDynamo, region: process.env.AWS_REGION }));
  const partition = async () =>
    ((await sdk.send(new QueryCommand({ TableName: process.env.TABLE_NAME, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `USER#${user.id}` }, ConsistentRead: true }))).Items ?? []) as Record<string, unknown>[];
  await until(async () => (await partition()).find((x) => x.entity === 'chat')?.unread_msg_by_operator === 1, 15_000, 'the message counted');
  await sleep(300); // a second count may not come, and nothing marks when it would have (this chat has no session to send a later message)
  const Items = await partition();
  sdk.destroy();
  expect(Items.filter((i) => i.entity === 'message').map((i) => [i.id, i.content])).toEqual([[item.id, 'once']]);
  expect(Items.find((i) => i.entity === 'chat')?.unread_msg_by_operator).toBe(1);
}, 30_000);

/** A client request to GET /api/client/chats with this session token. */
const listChatsEvent = (token: string) =>
  ({
    routeKey: 'GET /api/client/chats',
    rawPath: '/api/client/chats',
    headers: { authorization: `Bearer ${token}` },
    isBase64Encoded: false,
    requestContext: { requestId: 'r-1', http: { method: 'GET', sourceIp: '127.0.0.1' } },
  }) as unknown as APIGatewayProxyEventV2;

async function sessionToken(tokens: typeof import('../../lambdas/adapters/tokens')) {
  const claims = { userId: '6f1c4a52-8a4b-4b8e-9a57-0c2b1f1d2e3a', botId: '0a5e7f1c-2d3b-4c5d-8e9f-1a2b3c4d5e6f' };
  return tokens.signToken('session', claims, new Date(Date.now() + 3600_000));
}

test('DynamoDB throttling throughout: three attempts with backoff, then 503 {error} with Retry-After, in seconds', async () => {
  behave = (_one, _raw, reply) =>
    reply(400, { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException', message: 'slow down' }, 'ProvisionedThroughputExceededException');
  const env = { DYNAMODB_ENDPOINT: standIn, JWT_SECRET_FILE: join(dir, 'jwt-secret'), BOT_CACHE_TTL_MS: '0' };
  const tokens = load<typeof import('../../lambdas/adapters/tokens')>('../../lambdas/adapters/tokens', env);
  const { handler } = load<typeof import('../../lambdas/client/list-chats')>('../../lambdas/client/list-chats', env);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const started = Date.now();
  const res = await handler(listChatsEvent(await sessionToken(tokens)));
  stderr.mockRestore();
  expect(res.statusCode).toBe(503);
  expect(JSON.parse(res.body as string)).toEqual({ error: expect.any(String) });
  expect(res.headers?.['retry-after']).toBe('1');
  expect(seen.map((s) => s.target)).toEqual(Array(3).fill('DynamoDB_20120810.GetItem'));
  expect(Date.now() - started).toBeLessThan(5000);
});

test('Secrets Manager not answering: three attempts bounded by AWS_REQUEST_TIMEOUT_MS, then 503 {error}; no key logged', async () => {
  behave = () => undefined; // the request is read and never answered
  const env = {
    SECRETS_MANAGER_ENDPOINT: standIn,
    JWT_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:jwt-AbCdEf',
    AWS_REQUEST_TIMEOUT_MS: '300',
  };
  const { handler } = load<typeof import('../../lambdas/client/list-chats')>('../../lambdas/client/list-chats', env);
  const lines: string[] = [];
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((line) => lines.push(String(line)) > 0);
  const started = Date.now();
  const res = await handler(listChatsEvent('eyJhbGciOiJIUzI1NiJ9.e30.x'));
  stderr.mockRestore();
  expect(res.statusCode).toBe(503);
  expect(JSON.parse(res.body as string)).toEqual({ error: expect.any(String) });
  expect(seen.map((one) => one.target)).toEqual(Array(3).fill('secretsmanager.GetSecretValue'));
  expect(Date.now() - started).toBeLessThan(3000);
  expect(lines.join('\n')).toMatch(/dependency unavailable/);
  expect(lines.join('\n')).not.toMatch(/SecretString|eyJhbGciOiJIUzI1NiJ9/);
});

test('a rotated JWT secret takes over within JWT_SECRET_MAX_AGE_SECONDS; tokens of the old one are then refused', async () => {
  let secret = 'a'.repeat(48);
  behave = (one, _raw, reply) => {
    expect(one.target).toBe('secretsmanager.GetSecretValue');
    reply(200, { ARN: one.body.SecretId, Name: 'jwt', SecretString: secret, VersionId: `v-${secret[0]}` });
  };
  const env = { SECRETS_MANAGER_ENDPOINT: standIn, JWT_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:jwt-AbCdEf', JWT_SECRET_MAX_AGE_SECONDS: '1' };
  const tokens = load<typeof import('../../lambdas/adapters/tokens')>('../../lambdas/adapters/tokens', env);
  const before = await sessionToken(tokens);
  await tokens.verifyToken('session', before);
  await tokens.verifyToken('session', before);
  expect(seen).toHaveLength(1); // fetched once, then cached

  secret = 'b'.repeat(48);
  await tokens.verifyToken('session', before); // still within the maximum age
  // The clock moved past the maximum age instead of waited for: Powertools' cache reads Date.now.
  const past = Date.now() + 1200;
  const clock = jest.spyOn(Date, 'now').mockImplementation(() => past);
  try {
    await expect(tokens.verifyToken('session', before)).rejects.toMatchObject({ kind: 'unauthenticated' }); // a 401 over HTTP
  } finally {
    clock.mockRestore();
  }
  const after = await sessionToken(tokens);
  await expect(jwtVerify(after, new TextEncoder().encode(secret))).resolves.toBeDefined();
  await expect(tokens.verifyToken('session', after)).resolves.toMatchObject({ userId: expect.any(String) });
  expect(seen).toHaveLength(2);
});
