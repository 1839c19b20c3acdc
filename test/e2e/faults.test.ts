// Faults on a stack of its own: DynamoDB Local frozen mid-request, the S3 emulator down during an upload,
// and the whole stack killed with SIGKILL: clear 503s, no partial writes, recovery, nothing acknowledged lost.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { processesOf, stackEnv, startLocalProcess, type LocalProcess } from '../support/local-process';
import { call, type Reply } from '../support/api';
import type { BodyOf } from '../support/paths';
import type { DemoBot } from '../../lib/local/stack';
import { until } from '../support/realtime';

let dir: string;
let env: Record<string, string>;
let stack: LocalProcess;
let clientKey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-faults-'));
  // Short AWS timeouts so a frozen dependency fails a request in about a second.
  env = await stackEnv(dir, { AWS_REQUEST_TIMEOUT_MS: '400', ECHO_BOT: 'off', DYNAMODB_IN_MEMORY: 'off' });
  stack = await startLocalProcess(env);
  clientKey = (JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot).client_key;
}, 60_000);
afterAll(async () => {
  const { dynamodb, s3 } = pids();
  for (const pid of [dynamodb, s3]) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      /* gone */
    }
  }
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pids = () => JSON.parse(readFileSync(join(dir, 'local-stack.json'), 'utf8')) as { stack: number; dynamodb: number; s3: number };

/** The shared test client, pointed at this file's own stack. */
async function api<M extends string, U extends string>(method: M, path: U, token?: string, json?: unknown, body?: FormData): Promise<Reply<BodyOf<M, U>> & { retryAfter: string | null }> {
  const res = await call(method, path, { base: stack.apiUrl, token, json, body });
  return { ...res, retryAfter: res.headers.get('retry-after') };
}

async function userWithChat() {
  const s = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  const chat = await api('POST', '/api/client/chats', s.body.session_token, { name: 'faults' });
  return { token: s.body.session_token, chatId: chat.body.id, userId: s.body.user.id };
}

function items() {
  const ddb = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: `http://127.0.0.1:${env.DYNAMODB_PORT}`, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  );
  return ddb.send(new ScanCommand({ TableName: 'chat-local', ConsistentRead: true })).then((r) => r.Items ?? []);
}

test('DynamoDB frozen mid-request → 503 {error} with Retry-After; after it is back the retry lands exactly once', async () => {
  const { token, chatId } = await userWithChat();
  process.kill(pids().dynamodb, 'SIGSTOP');
  let during;
  try {
    during = await api('POST', `/api/client/chats/${chatId}/messages`, token, { content: 'while frozen', client_message_id: 'frozen-1' });
  } finally {
    process.kill(pids().dynamodb, 'SIGCONT');
  }
  expect(during.status).toBe(503);
  expect(during.body).toEqual({ error: expect.any(String) });
  expect(during.retryAfter).toBe('1');
  // The client retries with the same key: the message exists once, whether or not the first try landed.
  const retry = await api('POST', `/api/client/chats/${chatId}/messages`, token, { content: 'while frozen', client_message_id: 'frozen-1' });
  expect([200, 201]).toContain(retry.status);
  const history = await api('GET', `/api/client/chats/${chatId}/messages`, token);
  expect(history.body.map((m) => m.content)).toEqual(['while frozen']);
  // The chat moves with the one message, from the stream, a moment after the send's answer.
  const chatMoved = async () => (await items()).find((i) => i.entity === 'chat' && i.id === chatId)?.updated_at === history.body[0].created_at;
  await until(chatMoved, 15_000, 'the chat to move with the message');
}, 60_000);

test('S3 down during an upload → 503 {error}, and no file record left behind', async () => {
  const { token } = await userWithChat();
  const before = (await items()).filter((i) => i.entity === 'file').length;
  process.kill(pids().s3, 'SIGSTOP');
  let res;
  try {
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.from('bytes')], { type: 'image/png' }), 'a.png');
    res = await api('POST', '/api/client/files', token, undefined, fd);
  } finally {
    process.kill(pids().s3, 'SIGCONT');
  }
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ error: expect.any(String) });
  expect((await items()).filter((i) => i.entity === 'file').length).toBe(before);
  // Back up: uploads work again.
  const fd = new FormData();
  fd.append('file', new Blob([Buffer.from('bytes')], { type: 'image/png' }), 'a.png');
  expect((await api('POST', '/api/client/files', token, undefined, fd)).status).toBe(201);
}, 60_000);

test('the stack killed with SIGKILL under load and restarted: every acknowledged message is still there', async () => {
  const { token, chatId } = await userWithChat();
  const acknowledged: string[] = [];
  let killed = false;
  const sender = (async () => {
    for (let i = 0; i < 200 && !killed; i++) {
      try {
        const res = await api('POST', `/api/client/chats/${chatId}/messages`, token, { content: `m${i}` });
        if (res.status === 201) acknowledged.push(res.body.id);
      } catch {
        return; // the connection died with the stack
      }
    }
  })();
  while (acknowledged.length < 15) await new Promise((r) => setTimeout(r, 10));
  process.kill(pids().stack, 'SIGKILL');
  killed = true;
  await sender;
  expect(await processesOf(dir, 5_000)).toEqual([]); // DynamoDB Local and the S3 emulator went with it
  await stack.stop();
  stack = await startLocalProcess(env);
  const history = await api('GET', `/api/client/chats/${chatId}/messages?limit=500`, token);
  const ids = new Set(history.body.map((m) => m.id));
  expect(acknowledged.filter((id) => !ids.has(id))).toEqual([]);
}, 90_000);
