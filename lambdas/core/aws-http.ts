// Small AWS calls without their SDK clients. The S3 client with its presigner adds ~150 KB, and the Secrets
// Manager client ~30 KB, to every function that uses them, for one PUT, one presigned GET and one
// GetSecretValue; the @connections API's client costs CPU on every post of a fan-out. They are signed here
// with SigV4 (checked against AWS's own signer in the tests) and sent with node:http on keep-alive sockets
// (BENCHMARKS.md "Bundles", "Realtime").
import { createHash, createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { defaultProvider } from './lambda-credentials';
import { config } from './config';

/** The services called this way: S3, Secrets Manager, and API Gateway's @connections API. */
type Service = 's3' | 'secretsmanager' | 'execute-api';

/** The day's signing key per credentials, region and service (SigV4 derives it with four HMACs). */
const signingKeys = new Map<string, Buffer>();
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const byName = ([a]: [string, string], [b]: [string, string]) => (a < b ? -1 : a > b ? 1 : 0);

interface SigningContext {
  credentials: { accessKeyId: string; sessionToken?: string };
  /** The request time as SigV4 writes it: 20261121T100000Z. */
  longDate: string;
  scope: string;
}

/**
 * AWS Signature Version 4 of one request, as AWS's own signer (@smithy/signature-v4) computes it: the unit
 * tests compare the two on every kind of request made here. Written out because a fan-out signs one post per
 * socket, and this costs a fraction of the CPU (the day's key is kept; nothing but the credentials is awaited).
 * `headers` are the headers to sign; `query`, the X-Amz-* parameters of a presigned URL.
 */
async function sigV4(
  service: Service,
  method: string,
  url: URL,
  sign: { now: Date; payloadHash: string; headers: (c: SigningContext) => Record<string, string>; query?: (c: SigningContext, signedNames: string) => Record<string, string> },
) {
  const credentials = await defaultProvider()();
  const longDate = sign.now.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  const shortDate = longDate.slice(0, 8);
  const region = config().region;
  const context: SigningContext = { credentials, longDate, scope: `${shortDate}/${region}/${service}/aws4_request` };
  const headers = sign.headers(context);
  const canonical = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) canonical.set(name.toLowerCase(), String(value).trim().replace(/\s+/g, ' '));
  const names = [...canonical.keys()].sort();
  const signedNames = names.join(';');
  const params = [...url.searchParams, ...Object.entries(sign.query?.(context, signedNames) ?? {})].sort(byName);
  // S3 signs the path as sent (keys are escaped once, by us); other services escape each segment again.
  const path = service === 's3' ? url.pathname : url.pathname.split('/').map(uriEscape).join('/');
  const query = params.map(([k, v]) => `${uriEscape(k)}=${uriEscape(v)}`).join('&');
  const request = [method, path, query, ...names.map((n) => `${n}:${canonical.get(n)}`), '', signedNames, sign.payloadHash].join('\n');
  const stringToSign = ['AWS4-HMAC-SHA256', longDate, context.scope, createHash('sha256').update(request).digest('hex')].join('\n');
  const keyId = `${credentials.accessKeyId}/${context.scope}`;
  let key = signingKeys.get(keyId);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, shortDate), region), service), 'aws4_request');
    signingKeys.clear(); // one day and one set of credentials at a time
    signingKeys.set(keyId, key);
  }
  const signature = hmac(key, stringToSign).toString('hex');
  return {
    query,
    signature,
    headers: { ...headers, authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${context.scope}, SignedHeaders=${signedNames}, Signature=${signature}` },
  };
}

/** RFC 3986 escaping of one path segment, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
export const uriEscape = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** An AWS dependency that could not be reached or kept failing: a 503 with Retry-After for the client. */
export class AwsUnavailableError extends Error {
  override name = 'ServiceUnavailable';
}

/** A reply read whole (AWS replies here are small: a status, an error document, a secret). */
export interface AwsReply {
  status: number;
  ok: boolean;
  text(): string;
}

// Keep-alive sockets, reused across posts and warm invocations. node:http rather than fetch: a fan-out posts
// once per socket, and fetch's streams and abort signals cost several times the CPU per post.
const agents = { 'http:': new HttpAgent({ keepAlive: true, maxSockets: 64 }), 'https:': new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };

function send(method: string, url: URL, headers: Record<string, string>, body: Buffer | string | undefined, timeoutMs: number): Promise<AwsReply> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
      url,
      { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: agents[url.protocol as 'http:'] },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          const data = Buffer.concat(chunks);
          resolve({ status, ok: status >= 200 && status < 300, text: () => data.toString('utf8') });
        });
      },
    );
    function fail(err: Error) {
      clearTimeout(timer);
      reject(err);
    }
    // The whole exchange is bounded, not just each idle gap.
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`timed out after ${timeoutMs} ms`), { name: 'TimeoutError' })), timeoutMs);
    req.on('error', fail);
    req.end(body);
  });
}

/**
 * Signs and sends one request: bounded by AWS_REQUEST_TIMEOUT_MS per attempt, network failures and 5xx tried
 * three times in all (as the SDK clients do), then an AwsUnavailableError. Other statuses are returned.
 */
export async function signedFetch(service: Service, method: string, url: URL, headers: Record<string, string> = {}, body?: Buffer | string): Promise<AwsReply> {
  const payloadHash = createHash('sha256').update(body ?? '').digest('hex');
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt * Math.random()));
    // Signed per attempt: the signature carries the time.
    const { headers: signed } = await sigV4(service, method, url, {
      now: new Date(),
      payloadHash,
      headers: ({ longDate, credentials }) => ({
        ...headers,
        host: url.host,
        'x-amz-date': longDate,
        'x-amz-content-sha256': payloadHash,
        ...(credentials.sessionToken && { 'x-amz-security-token': credentials.sessionToken }),
      }),
    });
    try {
      const res = await send(method, url, signed, body, config().awsRequestTimeoutMs);
      if (res.status < 500) return res;
      last = new Error(`${service} answered ${res.status}: ${res.text().slice(0, 200)}`);
    } catch (err) {
      last = err;
    }
  }
  throw new AwsUnavailableError(`${service} ${method} ${url.pathname} failed after 3 attempts`, { cause: last });
}

/** A presigned URL: computed locally (no network), valid `expiresIn` seconds. */
export async function presign(service: 's3', method: string, url: URL, expiresIn: number, signingDate = new Date()): Promise<string> {
  // As the SDK's S3 presigner does: only Host is signed, and the payload is not (the holder of the URL sends
  // or gets it); the X-Amz-* values travel in the query.
  const s = await sigV4(service, method, url, {
    headers: () => ({ host: url.host }),
    payloadHash: 'UNSIGNED-PAYLOAD',
    now: signingDate,
    query: ({ scope, longDate, credentials }, signedNames) => ({
      'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
      'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD',
      'X-Amz-Credential': `${credentials.accessKeyId}/${scope}`,
      'X-Amz-Date': longDate,
      'X-Amz-Expires': String(expiresIn),
      ...(credentials.sessionToken && { 'X-Amz-Security-Token': credentials.sessionToken }),
      'X-Amz-SignedHeaders': signedNames,
    }),
  });
  return `${url.protocol}//${url.host}${url.pathname}?${s.query}&X-Amz-Signature=${s.signature}`;
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
};

/** Secrets Manager's GetSecretValue (JSON 1.1 protocol), once per cold start. */
export async function getSecretValue(secretId: string): Promise<string> {
  const { region, secretsManagerEndpoint } = config();
  const url = new URL(secretsManagerEndpoint ?? `https://secretsmanager.${region}.amazonaws.com/`);
  const res = await signedFetch(
    'secretsmanager',
    'POST',
    url,
    { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'secretsmanager.GetSecretValue' },
    JSON.stringify({ SecretId: secretId }),
  );
  const body = parseJson(res.text()) as { SecretString?: string; __type?: string; message?: string; Message?: string };
  if (!res.ok) throw new Error(`Secrets Manager GetSecretValue answered ${res.status}: ${body.__type ?? ''} ${body.message ?? body.Message ?? ''}`);
  return body.SecretString ?? '';
}
