// What S3 checks of a browser's POST upload (a presigned POST: SigV4 over a base64 policy), which the S3
// emulator does not: the signature, the policy's expiry and every condition (the key, the exact
// Content-Type, the content-length-range), and no field the policy does not cover. The local stack puts
// startPostPolicyProxy in front of the emulator so that `npm start` refuses what AWS would.
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { ALGORITHM_IDENTIFIER, SignatureV4 } from '@smithy/signature-v4';
import { Sha256 } from '@smithy/core/checksum';
import { credentialScope, isBucketListing, listingSignatureValid } from './s3-list';
import { carriesSignature, isPreflight } from './s3-auth';

export interface PostCheck {
  fields: Record<string, string>;
  fileSize: number;
  now: Date;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

export type PostVerdict = { ok: true } | { ok: false; status: number; code: string; message: string };

/**
 * A POST policy's signature as S3 computes it: the SDK's SigV4 signer over the policy's base64 text, with the
 * signing key of the credential's scope. Undefined for a malformed scope.
 */
export function policySignature(policy: string, credentials: PostCheck['credentials'], scope: string): Promise<string> | undefined {
  const s = credentialScope(scope);
  if (!s) return undefined;
  return new SignatureV4({ credentials, region: s.region, service: s.service, sha256: Sha256 }).sign(policy, {
    signingDate: s.signingDate,
    signingRegion: s.region,
    signingService: s.service,
  });
}
const denied = (message: string): PostVerdict => ({ ok: false, status: 403, code: 'AccessDenied', message });
/** Fields a policy need not name (S3's own list). */
const UNCOVERED = new Set(['policy', 'x-amz-signature', 'file']);

export async function verifyPostPolicy(c: PostCheck): Promise<PostVerdict> {
  const f = Object.fromEntries(Object.entries(c.fields).map(([k, v]) => [k.toLowerCase(), v]));
  for (const name of ['policy', 'x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature', 'key']) {
    if (f[name] === undefined) return { ok: false, status: 400, code: 'InvalidArgument', message: `Bucket POST must contain a field named '${name}'.` };
  }
  if (f['x-amz-algorithm'] !== ALGORITHM_IDENTIFIER) return { ok: false, status: 400, code: 'InvalidArgument', message: `Only ${ALGORITHM_IDENTIFIER} is supported` };
  const [accessKey, ...scope] = f['x-amz-credential'].split('/');
  if (accessKey !== c.credentials.accessKeyId) {
    return { ok: false, status: 403, code: 'InvalidAccessKeyId', message: 'The AWS Access Key Id you provided does not exist in our records.' };
  }
  if ((await policySignature(f.policy, c.credentials, scope.join('/'))) !== f['x-amz-signature'].toLowerCase()) {
    return { ok: false, status: 403, code: 'SignatureDoesNotMatch', message: 'The request signature we calculated does not match the signature you provided.' };
  }
  let policy: { expiration?: string; conditions?: unknown[] };
  try {
    policy = JSON.parse(Buffer.from(f.policy, 'base64').toString('utf8')) as typeof policy;
  } catch {
    return { ok: false, status: 400, code: 'InvalidPolicyDocument', message: 'Invalid Policy: Invalid JSON.' };
  }
  if (!policy.expiration || !(Date.parse(policy.expiration) > c.now.getTime())) return denied('Invalid according to Policy: Policy expired.');
  const covered = new Set<string>();
  for (const condition of policy.conditions ?? []) {
    const failed = (): PostVerdict => denied(`Invalid according to Policy: Policy Condition failed: ${JSON.stringify(condition)}`);
    if (Array.isArray(condition) && condition[0] === 'content-length-range') {
      const [, min, max] = condition as [string, number, number];
      if (c.fileSize > max) return { ok: false, status: 400, code: 'EntityTooLarge', message: 'Your proposed upload exceeds the maximum allowed size' };
      if (c.fileSize < min) return { ok: false, status: 400, code: 'EntityTooSmall', message: 'Your proposed upload is smaller than the minimum allowed size' };
      continue;
    }
    // { "field": "value" } is ["eq", "$field", "value"].
    const [op, ref, expected] = Array.isArray(condition)
      ? (condition as [string, string, string])
      : (['eq', `$${Object.keys(condition as object)[0]}`, Object.values(condition as object)[0]] as [string, string, string]);
    const name = String(ref).replace(/^\$/, '').toLowerCase();
    covered.add(name);
    const actual = name === 'bucket' ? c.bucket : (f[name] ?? '');
    if (op === 'eq' ? actual !== expected : op === 'starts-with' ? !actual.startsWith(expected) : true) return failed();
  }
  const extra = Object.keys(f).find((k) => !UNCOVERED.has(k) && !k.startsWith('x-ignore-') && !covered.has(k));
  if (extra) return denied(`Invalid according to Policy: Extra input fields: ${extra}`);
  return { ok: true };
}

const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

export function s3ErrorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error>`;
}

export interface PostPolicyProxy {
  port: number;
  close(): Promise<void>;
}

function replyError(res: ServerResponse, status: number, code: string, message: string, origin?: string): void {
  if (res.headersSent) return void res.destroy();
  // As S3 does for an origin its CORS rules allow (the emulator's allow any): the page can read why.
  const cors = origin ? { 'access-control-allow-origin': origin, vary: 'Origin' } : {};
  res.writeHead(status, { 'content-type': 'application/xml', ...cors }).end(s3ErrorXml(code, message));
}

/** Where the emulator listens: a TCP port on 127.0.0.1, or a Unix socket (no port to race for). */
export type Target = { port: number } | { socketPath: string };

/** Sends a request on to the emulator and its reply back. */
function forward(target: Target, req: IncomingMessage, res: ServerResponse, body: NodeJS.ReadableStream, headers = req.headers): void {
  const at = 'socketPath' in target ? { socketPath: target.socketPath } : { host: '127.0.0.1', port: target.port };
  const out = request({ ...at, method: req.method, path: req.url, headers }, (reply) => {
    res.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(res);
  });
  out.on('error', (err) => replyError(res, 502, 'BadGateway', `the S3 emulator did not answer: ${err.message}`));
  body.pipe(out);
}

/**
 * A node:http server on `port` in front of the emulator at `target`: a signed request passes through as it is
 * (the emulator checks its signature), an unsigned one is refused with S3's 403 (s3-auth.ts), and a browser POST
 * upload to the bucket is kept in a temporary file while its fields and size are read, checked with
 * verifyPostPolicy, and only then sent on (byte for byte) or refused with S3's error.
 */
export async function startPostPolicyProxy(o: {
  host: string;
  port: number;
  target: Target;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  maxBytes?: number;
}): Promise<PostPolicyProxy> {
  const maxBytes = o.maxBytes ?? 5 * 1024 ** 3;
  const isUpload = (req: IncomingMessage) =>
    req.method === 'POST' && /^\/[^/?]+\/?(\?.*)?$/.test(req.url ?? '') && (req.url ?? '').slice(1).split(/[/?]/)[0] === o.bucket && /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
  const server = createServer((req, res) => {
    if (isBucketListing(req, o.bucket)) return void checkListing(req, res);
    if (isUpload(req)) return void checkUpload(req, res);
    if (!isPreflight(req) && !carriesSignature(req)) return refuseUnsigned(req, res);
    forward(o.target, req, res, req);
  });
  function refuseUnsigned(req: IncomingMessage, res: ServerResponse): void {
    // The body is not wanted: drop it rather than read it (an unsigned PUT of gigabytes).
    res.setHeader('connection', 'close');
    replyError(res, 403, 'AccessDenied', 'Access Denied', req.headers.origin);
    req.resume();
  }
  async function checkListing(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(await listingSignatureValid(req, o.credentials))) {
      return replyError(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.');
    }
    const headers = { ...req.headers };
    for (const h of ['authorization', 'x-amz-date', 'x-amz-content-sha256']) delete headers[h];
    const url = new URL(req.url ?? '/', 'http://x');
    forward(o.target, { ...req, url: `/${o.bucket}${url.search}`, method: req.method } as IncomingMessage, res, req, headers);
  }
  async function checkUpload(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 's3-post-'));
    const file = join(dir, 'body');
    const origin = req.headers.origin;
    try {
      const fields: Record<string, string> = {};
      let fileSize = 0;
      let tooLarge = false;
      const parser = busboy({ headers: req.headers, limits: { fileSize: maxBytes, fields: 100 } });
      // Listened to at once: a malformed body must not become an uncaught error of the emulator's process.
      const parsed = new Promise<void>((resolve, reject) => parser.once('finish', resolve).once('error', reject));
      parser.on('field', (name, value) => (fields[name] = value));
      parser.on('file', (_name, stream) => {
        stream.on('data', (chunk: Buffer) => (fileSize += chunk.length));
        stream.on('limit', () => (tooLarge = true));
        stream.resume();
      });
      // The raw bytes go to the file and through the parser at once.
      const tee = new PassThrough();
      tee.pipe(parser);
      await Promise.all([pipeline(req, tee, createWriteStream(file)), parsed]);
      if (tooLarge) return replyError(res, 400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', origin);
      const verdict = await verifyPostPolicy({ fields, fileSize, now: new Date(), bucket: o.bucket, credentials: o.credentials });
      if (!verdict.ok) return replyError(res, verdict.status, verdict.code, verdict.message, origin);
      const headers = { ...req.headers, 'content-length': String(statSync(file).size) };
      delete headers['transfer-encoding'];
      await new Promise<void>((resolve) => {
        res.once('close', resolve);
        forward(o.target, req, res, createReadStream(file), headers);
      });
    } catch (err) {
      replyError(res, 400, 'MalformedPOSTRequest', `The body of your POST request is not well-formed multipart/form-data: ${(err as Error).message}`, origin);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.port, o.host, () => resolve()));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
