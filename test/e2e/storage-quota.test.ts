// The per-user storage quota over real HTTP (a stack of its own with small quotas): bytes of pending or unsent
// client uploads at a time (413), bytes a day (429 with Retry-After until 00:00 UTC); a sent file gives its
// bytes back, a refused request takes none. Bot API uploads do not count.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackEnv, startLocalProcess, type LocalProcess } from '../support/local-process';
import { call, type Reply } from '../support/api';
import type { BodyOf } from '../support/paths';
import type { DemoBot } from '../../lib/local/stack';
import { until } from '../support/realtime';
import { png } from '../support/files';

let stack: LocalProcess;
let dir: string;
let clientKey: string;
let secretKey: string;

const MAX = 10_000;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-quota-'));
  stack = await startLocalProcess(
    await stackEnv(dir, {
      MAX_UPLOAD_BYTES: String(MAX),
      MAX_OPEN_UPLOAD_BYTES: String(2 * MAX),
      MAX_UPLOAD_BYTES_PER_DAY: String(3 * MAX),
      RATE_UPLOADS_PER_MINUTE: '1000',
      ECHO_BOT: 'off',
    }),
  );
  const demo = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot;
  clientKey = demo.client_key;
  secretKey = demo.secret_key;
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function api<M extends string, U extends string>(
  method: M,
  path: U,
  o: { token?: string; json?: unknown; body?: FormData; secret?: string } = {},
): Promise<Reply<BodyOf<M, U>> & { retryAfter: string | null }> {
  const res = await call(method, path, { base: stack.apiUrl, token: o.token, json: o.json, body: o.body, headers: o.secret ? { authorization: `Bearer ${o.secret}` } : undefined });
  return { ...res, retryAfter: res.headers.get('retry-after') };
}

/** A PNG of exactly `size` bytes. */
const form = (bytes: Buffer) => {
  const fd = new FormData();
  fd.append('file', new Blob([bytes], { type: 'image/png' }), 'p.png');
  return fd;
};
const ask = (token: string, size: number) => api('POST', '/api/client/files/uploads', { token, json: { name: 'p.png', size, mime_type: 'image/png' } });

async function postToS3(ticket: { upload: { url: string; fields: Record<string, string> } }, bytes: Buffer): Promise<number> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) fd.append(k, v);
  fd.append('file', new Blob([bytes], { type: 'image/png' }), 'p.png');
  return (await fetch(ticket.upload.url, { method: 'POST', body: fd })).status;
}

type Answer = Awaited<ReturnType<typeof ask>>;

const expect413 = (res: { status: number; body: unknown; retryAfter: string | null }) => {
  expect([res.status, res.body, res.retryAfter]).toEqual([413, { error: expect.stringMatching(/at most 20000 bytes .*not yet sent at a time/) }, null]);
};

test('at most 20000 bytes of pending or unsent uploads at a time (413), 30000 a day (429 until 00:00 UTC); a sent file gives its bytes back; refusals take nothing', async () => {
  const s = await api('POST', '/api/client/session', { json: { client_key: clientKey } });
  const token = s.body.session_token;
  const chat = await api('POST', '/api/client/chats', { token, json: { name: 'quota' } });
  const send = (fileId: string) => api('POST', `/api/client/chats/${chat.body.id}/messages`, { token, json: { content: '', content_type: 'photo', files: [fileId] } });

  // 10000 bytes by POST /files (uploaded, unsent), 10000 declared for a direct upload (pending): 20000 at a time.
  const small = await api('POST', '/api/client/files', { token, body: form(png(MAX)) });
  expect(small.status).toBe(201);
  const first = await ask(token, MAX);
  expect(first.status).toBe(201);
  // One byte more, either way: 413, nothing written (the file list of the direct upload is the user's alone).
  expect413(await ask(token, 1));
  expect413(await api('POST', '/api/client/files', { token, body: form(png(9)) }));

  // Sent, the small file's bytes go back (from the stream, a moment later): room for 10000 more.
  expect((await send(small.body.id)).status).toBe(201);
  let second!: Answer;
  await until(async () => (second = await ask(token, MAX)).status === 201, 10_000, 'the sent file\'s bytes to be given back');
  // 30000 taken today: the refusals above took none (else this ask would have been a 429).

  // The first direct upload lands and is sent: 10000 at a time again, but today's 30000 are used up.
  expect(await postToS3(first.body, png(MAX, 3))).toBe(204);
  await until(async () => (await api('GET', `/api/client/files/${first.body.file.id}`, { token })).body.status === 'uploaded', 10_000, 'the upload to settle');
  expect((await send(first.body.file.id)).status).toBe(201);
  let over!: Answer;
  await until(async () => (over = await ask(token, 1)).status === 429, 10_000, 'the daily quota to be what refuses');
  const untilMidnight = 86400 - ((Date.now() / 1000) % 86400);
  expect(over.body).toEqual({ error: expect.stringMatching(/^Too many uploads today: at most 30000 bytes/) });
  expect(Number(over.retryAfter)).toBeGreaterThan(0);
  expect(Number(over.retryAfter)).toBeLessThanOrEqual(Math.ceil(untilMidnight) + 1);
  expect((await api('POST', '/api/client/files', { token, body: form(png(9)) })).status).toBe(429);
  // The second direct upload is still there to finish.
  expect(await postToS3(second.body, png(MAX, 4))).toBe(204);

  // Another user has quotas of their own; the bot's uploads for a chat do not count against its user.
  const other = await api('POST', '/api/client/session', { json: { client_key: clientKey } });
  expect((await ask(other.body.session_token, MAX)).status).toBe(201);
  for (let i = 0; i < 3; i++) {
    const fd = form(png(MAX));
    fd.append('chat_id', chat.body.id);
    expect((await api('POST', '/api/bot/files', { secret: secretKey, body: fd })).status).toBe(201);
  }
});
