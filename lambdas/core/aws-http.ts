// Small AWS calls without their SDK clients. The S3 client with its presigner adds ~150 KB, and the Secrets
// Manager client ~30 KB, to every function that uses them, for one PUT, one presigned GET and one
// GetSecretValue; the @connections API's client costs CPU on every post of a fan-out. They are signed here
// with SigV4 (checked against AWS's own signer in the tests) and sent by a small HTTP/1.1 client on keep-alive
// sockets (http1.ts; BENCHMARKS.md "Bundles", "Realtime").
import { createHash, createHmac } from 'node:crypto';
import { http1 } from './http1';
import { defaultProvider } from './lambda-credentials';
import { config } from './config';
import { byCodeUnits } from './ids';
import type { AwsCredentialIdentity } from '@smithy/types';

/** The services called this way: DynamoDB, SQS, S3, Secrets Manager, and API Gateway's @connections API. */
type Service = 'dynamodb' | 'sqs' | 's3' | 'secretsmanager' | 'execute-api';

/** The day's signing key per credentials, region and service (SigV4 derives it with four HMACs). */
const signingKeys = new Map<string, Buffer>();
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const sha256Hex = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
const byName = ([a]: [string, string], [b]: [string, string]) => byCodeUnits(a, b);

/** What every request signed at one moment for one service shares: credentials, date, scope and key. */
interface SigningTime {
  credentials: AwsCredentialIdentity;
  /** The request time as SigV4 writes it: 20261121T100000Z. */
  longDate: string;
  scope: string;
  key: Buffer;
  service: Service;
}

async function signingTime(service: Service, now: Date): Promise<SigningTime> {
  const credentials = await defaultProvider()();
  const longDate = now.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
  const shortDate = longDate.slice(0, 8);
  const region = config().region;
  const scope = `${shortDate}/${region}/${service}/aws4_request`;
  const keyId = `${credentials.accessKeyId}/${scope}`;
  let key = signingKeys.get(keyId);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, shortDate), region), service), 'aws4_request');
    signingKeys.clear(); // one day and one set of credentials at a time
    signingKeys.set(keyId, key);
  }
  return { credentials, longDate, scope, key, service };
}

/**
 * AWS Signature Version 4, as AWS's own signer (@smithy/signature-v4) computes it: the unit tests compare the
 * two on every kind of request made here. Written out because a fan-out signs one post per socket: this signs
 * requests that share method, headers and payload and differ only in URL, so what they share (the canonical
 * headers, the key) is worked out once and each URL then costs one SHA-256 and one HMAC.
 * `headers` are the headers to sign; `extraQuery`, the X-Amz-* parameters of a presigned URL.
 */
function sigV4(time: SigningTime, method: string, headers: Record<string, string>, payloadHash: string) {
  const canonical = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) canonical.set(name.toLowerCase(), String(value).trim().replace(/\s+/g, ' '));
  const names = [...canonical.keys()].sort();
  const signedNames = names.join(';');
  const tail = `${names.map((n) => `${n}:${canonical.get(n)}`).join('\n')}\n\n${signedNames}\n${payloadHash}`;
  const authPrefix = `AWS4-HMAC-SHA256 Credential=${time.credentials.accessKeyId}/${time.scope}, SignedHeaders=${signedNames}, Signature=`;
  return {
    signedNames,
    sign(url: URL, extraQuery?: Record<string, string>) {
      const params = url.search || extraQuery ? [...url.searchParams, ...Object.entries(extraQuery ?? {})].sort(byName) : [];
      // S3 signs the path as sent (keys are escaped once, by us); other services escape each segment again.
      const path = time.service === 's3' ? url.pathname : url.pathname.split('/').map(uriEscape).join('/');
      const query = params.map(([k, v]) => `${uriEscape(k)}=${uriEscape(v)}`).join('&');
      const stringToSign = `AWS4-HMAC-SHA256\n${time.longDate}\n${time.scope}\n${sha256Hex(`${method}\n${path}\n${query}\n${tail}`)}`;
      const signature = hmac(time.key, stringToSign).toString('hex');
      return { query, signature, authorization: authPrefix + signature };
    },
  };
}

/**
 * The headers of signed requests to one host (the SigV4 ones added, not those of a presigned URL): returns,
 * for each URL, the headers with its Authorization.
 */
function headerSigner(time: SigningTime, method: string, host: string, headers: Record<string, string>, payloadHash: string) {
  const all: Record<string, string> = {
    ...headers,
    host,
    'x-amz-date': time.longDate,
    'x-amz-content-sha256': payloadHash,
    ...(time.credentials.sessionToken && { 'x-amz-security-token': time.credentials.sessionToken }),
  };
  const { sign } = sigV4(time, method, all, payloadHash);
  return (url: URL): Record<string, string> => ({ ...all, authorization: sign(url).authorization });
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

async function send(method: string, url: URL, headers: Record<string, string>, body: Buffer | string | undefined, timeoutMs: number): Promise<AwsReply> {
  const { status, body: data } = await http1(method, url, headers, body, timeoutMs);
  return { status, ok: status >= 200 && status < 300, text: () => data.toString('utf8') };
}

/**
 * Signs and sends one request: bounded by AWS_REQUEST_TIMEOUT_MS per attempt, network failures and 5xx tried
 * three times in all (as the SDK clients do), then an AwsUnavailableError. Other statuses are returned.
 */
export async function signedFetch(service: Service, method: string, url: URL, headers: Record<string, string> = {}, body?: Buffer | string): Promise<AwsReply> {
  return sendSigned(service, method, url, headers, body, sha256Hex(body ?? ''));
}

/**
 * One body POSTed to many URLs (a fan-out: one post per socket), each post as signedFetch makes it. The posts
 * are signed at one moment, so the body's hash, the key and the canonical headers are worked out once per host
 * and each post costs one SHA-256 and one HMAC (BENCHMARKS.md "Realtime"). A retry is signed anew.
 */
export async function signedPoster(service: Service, body: Buffer, headers: Record<string, string> = {}): Promise<(url: URL) => Promise<AwsReply>> {
  const payloadHash = sha256Hex(body);
  const time = await signingTime(service, new Date());
  const byHost = new Map<string, (url: URL) => Record<string, string>>();
  const signed = (url: URL) => {
    let signer = byHost.get(url.host);
    if (!signer) byHost.set(url.host, (signer = headerSigner(time, 'POST', url.host, headers, payloadHash)));
    return signer(url);
  };
  return (url) => sendSigned(service, 'POST', url, headers, body, payloadHash, signed);
}

/** The pause before retry `attempt` (1, 2, ...): exponential with full jitter, as the SDK clients pause. */
export const retryPause = (attempt: number): Promise<void> => new Promise((r) => setTimeout(r, 50 * 2 ** attempt * Math.random()));

/** Network failures and 5xx are tried three times in all; each retry is signed anew (the signature carries the time). */
async function sendSigned(
  service: Service,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: Buffer | string | undefined,
  payloadHash: string,
  signedFirst?: (url: URL) => Record<string, string>,
): Promise<AwsReply> {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt) await retryPause(attempt);
    try {
      const signed =
        attempt === 0 && signedFirst ? signedFirst(url) : headerSigner(await signingTime(service, new Date()), method, url.host, headers, payloadHash)(url);
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
  const time = await signingTime(service, signingDate);
  const signer = sigV4(time, method, { host: url.host }, 'UNSIGNED-PAYLOAD');
  const s = signer.sign(url, {
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD',
    'X-Amz-Credential': `${time.credentials.accessKeyId}/${time.scope}`,
    'X-Amz-Date': time.longDate,
    'X-Amz-Expires': String(expiresIn),
    ...(time.credentials.sessionToken && { 'X-Amz-Security-Token': time.credentials.sessionToken }),
    'X-Amz-SignedHeaders': signer.signedNames,
  });
  return `${url.protocol}//${url.host}${url.pathname}?${s.query}&X-Amz-Signature=${s.signature}`;
}

/** A refused call of an AWS JSON-protocol API: its error type as the service names it, its message, its document. */
export interface AwsJsonError {
  /** The part of `__type` after '#' (ConditionalCheckFailedException, ...); HTTP<status> when there is none. */
  type: string;
  message: string;
  doc: Record<string, unknown>;
}

/** What a refusal's body says; a body that is not JSON (a proxy's page) leaves the status to say it. */
export function awsJsonError(status: number, text: string): AwsJsonError {
  let doc: Record<string, unknown> = {};
  try {
    doc = JSON.parse(text) ?? {};
  } catch {
    // not JSON
  }
  return { type: String(doc.__type ?? '').split('#').pop() || `HTTP${status}`, message: String(doc.message ?? doc.Message ?? ''), doc };
}

const endpoints = new Map<string, URL>();

/** A service's endpoint: the one configured (the local stack's emulators), or AWS's regional one. */
function endpointOf(service: Service, configured: string | undefined): URL {
  const key = `${service} ${configured ?? ''}`;
  let url = endpoints.get(key);
  if (!url) endpoints.set(key, (url = new URL(configured ?? `https://${service}.${config().region}.amazonaws.com/`)));
  return url;
}

/**
 * One call of an AWS JSON-protocol API (DynamoDB and SQS speak 1.0, Secrets Manager 1.1), made by signedFetch:
 * the reply's document, or `error` when the service refused it (5xx and network failures are retried below).
 */
export async function awsJsonCall(
  service: 'dynamodb' | 'sqs' | 'secretsmanager',
  configuredEndpoint: string | undefined,
  protocol: '1.0' | '1.1',
  target: string,
  input: object,
): Promise<{ status: number; doc: Record<string, unknown>; error?: AwsJsonError }> {
  const headers = { 'content-type': `application/x-amz-json-${protocol}`, 'x-amz-target': target };
  const reply = await signedFetch(service, 'POST', endpointOf(service, configuredEndpoint), headers, JSON.stringify(input));
  const text = reply.text();
  if (reply.ok) return { status: reply.status, doc: text ? JSON.parse(text) : {} };
  const error = awsJsonError(reply.status, text);
  return { status: reply.status, doc: error.doc, error };
}

/** Secrets Manager's GetSecretValue, once per cold start. */
export async function getSecretValue(secretId: string): Promise<string> {
  const { status, doc, error } = await awsJsonCall('secretsmanager', config().secretsManagerEndpoint, '1.1', 'secretsmanager.GetSecretValue', { SecretId: secretId });
  if (error) throw new Error(`Secrets Manager GetSecretValue answered ${status}: ${error.type} ${error.message}`);
  return (doc.SecretString as string | undefined) ?? '';
}
