// The local stand-in for S3's POST policy checks (lib/local/s3-post.ts), in front of a real S3 emulator, with
// real presigned POSTs from @aws-sdk/s3-presigned-post: a valid upload lands; every refusal is S3's status and
// error code, and nothing is stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';
import { S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost, type PresignedPost } from '@aws-sdk/s3-presigned-post';
import { policySignature, startPostPolicyProxy, verifyPostPolicy, type PostPolicyProxy } from '../../lib/local/s3-post';

const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const BUCKET = 'files';
let dir: string;
let emulator: S3rver;
let proxy: PostPolicyProxy;
let s3: S3Client;
/** The emulator's own port, behind the proxy: what it holds, read unsigned (the proxy refuses unsigned reads). */
let emulatorPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 's3-post-test-'));
  emulator = new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true, configureBuckets: [{ name: BUCKET, configs: [] }] });
  const { port } = (await emulator.run()) as unknown as { port: number };
  emulatorPort = port;
  proxy = await startPostPolicyProxy({ host: '127.0.0.1', port: 0, target: { port }, bucket: BUCKET, credentials });
  s3 = new S3Client({ endpoint: `http://127.0.0.1:${proxy.port}`, forcePathStyle: true, region: 'us-east-1', credentials });
});

afterAll(async () => {
  s3?.destroy();
  await proxy?.close();
  await emulator?.close();
  rmSync(dir, { recursive: true, force: true });
});

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100, 1)]);
let n = 0;
const presign = (over: { key?: string; max?: number; expires?: number } = {}) =>
  createPresignedPost(s3, {
    Bucket: BUCKET,
    Key: over.key ?? `up/${n++}`,
    Conditions: [
      ['eq', '$Content-Type', 'image/png'],
      ['content-length-range', 1, over.max ?? PNG.length],
    ],
    Fields: { 'Content-Type': 'image/png' },
    Expires: over.expires ?? 600,
  });

async function post(p: PresignedPost, bytes: Buffer, change: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries({ ...p.fields, ...change })) form.append(k, v);
  form.append('file', new Blob([bytes], { type: 'image/png' }), 'x.png');
  const res = await fetch(p.url, { method: 'POST', body: form });
  return { status: res.status, text: await res.text() };
}

const stored = async (key: string) => (await fetch(`http://127.0.0.1:${emulatorPort}/${BUCKET}/${key}`)).status;

test('a valid upload lands, byte for byte', async () => {
  const p = await presign();
  expect((await post(p, PNG)).status).toBe(204);
  const res = await fetch(`http://127.0.0.1:${emulatorPort}/${BUCKET}/${p.fields.key}`);
  expect(res.status).toBe(200);
  expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
});

/** A POST policy as S3 reads it: conditions are `[op, field, value]` lists or `{ field: value }` objects. */
type Policy = { expiration: string; conditions: (unknown[] | Record<string, string>)[] };

test.each([
  ['a signature tampered with', (p: PresignedPost) => ({ 'X-Amz-Signature': p.fields['X-Amz-Signature'].replace(/.$/, (c) => (c === '0' ? '1' : '0')) }), 403, 'SignatureDoesNotMatch'],
  ['a policy re-encoded for another key', (p: PresignedPost) => {
    const policy = JSON.parse(Buffer.from(p.fields.Policy, 'base64').toString()) as Policy;
    policy.conditions = policy.conditions.map((c) => (!Array.isArray(c) && c.key ? { key: 'elsewhere' } : c));
    return { Policy: Buffer.from(JSON.stringify(policy)).toString('base64'), key: 'elsewhere' };
  }, 403, 'SignatureDoesNotMatch'],
  ['another key than the policy names', () => ({ key: 'up/another' }), 403, 'AccessDenied'],
  ['another Content-Type', () => ({ 'Content-Type': 'text/html' }), 403, 'AccessDenied'],
  ['a field the policy does not name', () => ({ 'x-amz-meta-extra': '1' }), 403, 'AccessDenied'],
  ['another access key', (p: PresignedPost) => ({ 'X-Amz-Credential': p.fields['X-Amz-Credential'].replace(/^S3RVER/, 'AKIAOTHER') }), 403, 'InvalidAccessKeyId'],
])('refused: %s (nothing stored)', async (_what, change, status, code) => {
  const p = await presign();
  const res = await post(p, PNG, change(p));
  expect({ status: res.status, code: /<Code>(\w+)<\/Code>/.exec(res.text)?.[1] }).toEqual({ status, code });
  expect(await stored(p.fields.key)).toBe(404);
});

test('refused: a file over the range, an empty one, and a policy past its expiration', async () => {
  const big = await presign({ max: PNG.length - 1 });
  expect(await post(big, PNG)).toMatchObject({ status: 400, text: expect.stringContaining('<Code>EntityTooLarge</Code>') });
  const empty = await presign();
  expect(await post(empty, Buffer.alloc(0))).toMatchObject({ status: 400, text: expect.stringContaining('<Code>EntityTooSmall</Code>') });
  const short = await presign({ expires: -1 }); // made already past its expiration: no wait for it
  expect(await post(short, PNG)).toMatchObject({ status: 403, text: expect.stringContaining('Policy expired') });
  for (const p of [big, empty, short]) expect(await stored(p.fields.key)).toBe(404);
});

test('conditions checked directly: starts-with and the bucket', async () => {
  const sign = async (policy: object) => {
    const b64 = Buffer.from(JSON.stringify(policy)).toString('base64');
    return { policy: b64, 'x-amz-signature': (await policySignature(b64, credentials, '20261125/us-east-1/s3/aws4_request'))! };
  };
  const base = { 'x-amz-algorithm': 'AWS4-HMAC-SHA256', 'x-amz-credential': 'S3RVER/20261125/us-east-1/s3/aws4_request', 'x-amz-date': '20261125T000000Z' };
  const policy = (conditions: unknown[]) => ({ expiration: new Date(Date.now() + 60_000).toISOString(), conditions: [...conditions, ['starts-with', '$x-amz-algorithm', ''], ['starts-with', '$x-amz-credential', ''], ['starts-with', '$x-amz-date', '']] });
  const check = async (conditions: unknown[], fields: Record<string, string>) =>
    verifyPostPolicy({ fields: { ...base, ...fields, ...(await sign(policy(conditions))) }, fileSize: 5, now: new Date(), bucket: BUCKET, credentials });
  expect(await check([['starts-with', '$key', 'bots/'], { bucket: BUCKET }], { key: 'bots/a' })).toEqual({ ok: true });
  expect(await check([['starts-with', '$key', 'bots/'], { bucket: BUCKET }], { key: 'other/a' })).toMatchObject({ ok: false, status: 403, code: 'AccessDenied' });
  expect(await check([{ bucket: 'another' }, ['starts-with', '$key', '']], { key: 'k' })).toMatchObject({ ok: false, code: 'AccessDenied' });
});

test('a malformed multipart body is a 400, and the proxy keeps serving', async () => {
  const res = await fetch(`http://127.0.0.1:${proxy.port}/${BUCKET}`, {
    method: 'POST',
    headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
    body: '--XYZ\r\nContent-Disposition: form-data; name="key"\r\n\r\nk\r\n--XYZ\r\nbroken',
  });
  expect(res.status).toBe(400);
  expect(await res.text()).toContain('<Code>MalformedPOSTRequest</Code>');
  const p = await presign();
  expect((await post(p, PNG)).status).toBe(204);
});

test('an unsigned request is 403 AccessDenied, even one whose Signature parameter comes after the 1,000 the emulator reads', async () => {
  const p = await presign();
  expect((await post(p, PNG)).status).toBe(204);
  const at = `http://127.0.0.1:${proxy.port}/${BUCKET}/${p.fields.key}`;
  const code = async (res: Response) => ({ status: res.status, code: /<Code>(\w+)<\/Code>/.exec(await res.text())?.[1] });
  expect(await code(await fetch(at))).toEqual({ status: 403, code: 'AccessDenied' });
  expect(await code(await fetch(at, { method: 'PUT', body: 'replaced' }))).toEqual({ status: 403, code: 'AccessDenied' });
  // Past node:querystring's first 1,000 parameters the emulator sees no Signature and would check nothing.
  const padded = `${at}?${Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join('&')}&Signature=x&AWSAccessKeyId=S3RVER&Expires=9999999999`;
  expect(await code(await fetch(padded, { method: 'PUT', body: 'replaced' }))).toEqual({ status: 403, code: 'AccessDenied' });
  const res = await fetch(`http://127.0.0.1:${emulatorPort}/${BUCKET}/${p.fields.key}`);
  expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
});
