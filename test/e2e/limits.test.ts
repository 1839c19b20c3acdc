// Abuse limits: per-user rates for messages, chats, uploads and reads and per-IP for sessions (a stack of its own
// with low limits), and the per-user chat count (the shared stack's default of 100).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackEnv, startLocalProcess, type LocalProcess } from '../support/local-process';
import { call, startOfRateWindow, userWithChat, type Reply } from '../support/api';
import type { BodyOf } from '../support/paths';
import type { DemoBot } from '../../lib/local/stack';

let stack: LocalProcess;
let dir: string;
let clientKey: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-limits-'));
  stack = await startLocalProcess(
    await stackEnv(dir, {
      RATE_MESSAGES_PER_MINUTE: '3',
      RATE_CHATS_PER_MINUTE: '2',
      RATE_UPLOADS_PER_MINUTE: '2',
      RATE_READS_PER_MINUTE: '4',
      RATE_SESSIONS_PER_IP_PER_MINUTE: '8',
      ECHO_BOT: 'off',
    }),
  );
  clientKey = (JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot).client_key;
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Fixed one-minute windows: start a burst early in a minute so it does not straddle two. */
const startOfWindow = () => startOfRateWindow(50);

/** The shared test client, pointed at this file's own stack. */
async function api<M extends string, U extends string>(method: M, path: U, token?: string, json?: unknown, body?: FormData): Promise<Reply<BodyOf<M, U>> & { retryAfter: string | null }> {
  const res = await call(method, path, { base: stack.apiUrl, token, json, body });
  return { ...res, retryAfter: res.headers.get('retry-after') };
}

const expect429 = (res: { status: number; body: unknown; retryAfter: string | null }) => {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: expect.stringMatching(/Too many/) });
  expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(res.retryAfter)).toBeLessThanOrEqual(60);
};

test('messages: 3 a minute per user, then 429 with Retry-After and nothing written; an idempotent retry still replays', async () => {
  await startOfWindow();
  const s = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  const token = s.body.session_token;
  const chat = await api('POST', '/api/client/chats', token, { name: 'rate' });
  const sent = [];
  for (let i = 0; i < 3; i++) sent.push(await api('POST', `/api/client/chats/${chat.body.id}/messages`, token, { content: `m${i}`, client_message_id: `k${i}` }));
  expect(sent.map((r) => r.status)).toEqual([201, 201, 201]);
  expect429(await api('POST', `/api/client/chats/${chat.body.id}/messages`, token, { content: 'one too many' }));
  const replay = await api('POST', `/api/client/chats/${chat.body.id}/messages`, token, { content: 'm0', client_message_id: 'k0' });
  expect(replay).toMatchObject({ status: 200, body: { id: sent[0].body.id } });
  const history = await api('GET', `/api/client/chats/${chat.body.id}/messages`, token);
  expect(history.body.map((m) => m.content)).toEqual(['m0', 'm1', 'm2']);
  // Another user has a budget of their own.
  const other = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  const otherChat = await api('POST', '/api/client/chats', other.body.session_token, { name: 'mine' });
  expect((await api('POST', `/api/client/chats/${otherChat.body.id}/messages`, other.body.session_token, { content: 'fine' })).status).toBe(201);
});

test('chats: 2 a minute per user; uploads: 2 a minute per user (checked before any bytes are stored)', async () => {
  await startOfWindow();
  const s = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  const token = s.body.session_token;
  expect((await api('POST', '/api/client/chats', token, { name: 'a' })).status).toBe(201);
  expect((await api('POST', '/api/client/chats', token, { name: 'b' })).status).toBe(201);
  expect429(await api('POST', '/api/client/chats', token, { name: 'c' }));
  expect((await api('GET', '/api/client/chats', token)).body).toHaveLength(2);
  const form = () => {
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.from('x')], { type: 'text/plain' }), 'x.txt');
    return fd;
  };
  expect((await api('POST', '/api/client/files', token, undefined, form())).status).toBe(201);
  expect((await api('POST', '/api/client/files', token, undefined, form())).status).toBe(201);
  expect429(await api('POST', '/api/client/files', token, undefined, form()));
});

test('reads: 4 a minute per user, every client read from one budget, then 429 with Retry-After', async () => {
  await startOfWindow();
  const s = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  const token = s.body.session_token;
  const chat = await api('POST', '/api/client/chats', token, { name: 'reads' });
  const fd = new FormData();
  fd.append('file', new Blob([Buffer.from('x')], { type: 'text/plain' }), 'x.txt');
  const file = await api('POST', '/api/client/files', token, undefined, fd);
  const reads = ['/api/client/chats', `/api/client/chats/${chat.body.id}/messages`, `/api/client/files/${file.body.id}`, '/api/client/chats'];
  const statuses = [];
  for (const path of reads) statuses.push((await api('GET', path, token)).status);
  expect(statuses).toEqual([200, 200, 200, 200]);
  expect429(await api('GET', `/api/client/chats/${chat.body.id}/messages`, token));
  expect429(await api('GET', `/api/client/files/${file.body.id}`, token));
  // Writes keep their own budgets, and another user has a read budget of their own.
  expect((await api('POST', `/api/client/chats/${chat.body.id}/messages`, token, { content: 'still sends' })).status).toBe(201);
  const other = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  expect((await api('GET', '/api/client/chats', other.body.session_token)).status).toBe(200);
});

test('sessions: limited per IP', async () => {
  await startOfWindow();
  const statuses: number[] = [];
  for (let i = 0; i < 9; i++) statuses.push((await api('POST', '/api/client/session', undefined, { client_key: clientKey })).status);
  // The budget (8 a minute) is shared with the sessions the tests above opened from this IP.
  expect(statuses).toContain(429);
  const last = await api('POST', '/api/client/session', undefined, { client_key: clientKey });
  expect429(last);
});

test('a user may have at most 100 chats (the default): the 101st is a 409', async () => {
  const { token } = await userWithChat();
  for (let i = 1; i < 100; i++) {
    const res = await call('POST', '/api/client/chats', { token, json: { name: `chat ${i}` } });
    if (res.status !== 201) throw new Error(`chat ${i}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  const over = await call('POST', '/api/client/chats', { token, json: { name: 'one too many' } });
  expect(over).toMatchObject({ status: 409, body: { error: expect.stringMatching(/at most 100 chats/) } });
  expect((await call('GET', '/api/client/chats', { token })).body).toHaveLength(100);
}, 60_000);
