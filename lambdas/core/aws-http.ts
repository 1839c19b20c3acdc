// Small AWS calls without their SDK clients. The S3 client with its presigner adds ~150 KB, and the Secrets
// Manager client ~30 KB, to every function that uses them, for one PUT, one presigned GET and one
// GetSecretValue; the @connections API's client costs CPU on every post of a fan-out. AWS's own SigV4 signer (@smithy/signature-v4, already in every bundle through the DynamoDB
// client) signs them here and fetch sends them (BENCHMARKS.md "Bundles").
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, SourceData } from '@smithy/types';
import { defaultProvider } from './lambda-credentials';
import { config } from './config';

const bytes = (d: SourceData): Buffer =>
  typeof d === 'string' ? Buffer.from(d, 'utf8') : ArrayBuffer.isView(d) ? Buffer.from(d.buffer, d.byteOffset, d.byteLength) : Buffer.from(d);

/** The SHA-256 (or HMAC-SHA-256 with a key) the signer asks for, from node:crypto. */
class Sha256 implements Checksum {
  private hash;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  private fresh() {
    return this.secret ? createHmac('sha256', bytes(this.secret)) : createHash('sha256');
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
}

/** The services called this way: S3, Secrets Manager, and API Gateway's @connections API. */
type Service = 's3' | 'secretsmanager' | 'execute-api';

const signers = new Map<string, SignatureV4>();
function signer(service: Service): SignatureV4 {
  let s = signers.get(service);
  if (!s) {
    // S3 signs the path as sent (keys are escaped once, by us); other services escape it again.
    s = new SignatureV4({ service, region: config().region, credentials: defaultProvider(), sha256: Sha256, uriEscapePath: service !== 's3', applyChecksum: false });
    signers.set(service, s);
  }
  return s;
}

/** RFC 3986 escaping of one path segment, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
export const uriEscape = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** An AWS dependency that could not be reached or kept failing: a 503 with Retry-After for the client. */
export class AwsUnavailableError extends Error {
  override name = 'ServiceUnavailable';
}

function toSignable(method: string, url: URL, headers: Record<string, string>, body?: Buffer | string) {
  return {
    method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { ...headers, host: url.host },
    body,
  };
}

/**
 * Signs and sends one request: bounded by AWS_REQUEST_TIMEOUT_MS per attempt, network failures and 5xx tried
 * three times in all (as the SDK clients do), then an AwsUnavailableError. Other statuses are returned.
 */
export async function signedFetch(service: Service, method: string, url: URL, headers: Record<string, string> = {}, body?: Buffer | string): Promise<Response> {
  const payload = body === undefined ? '' : body;
  const toSign = toSignable(method, url, { ...headers, 'x-amz-content-sha256': createHash('sha256').update(payload).digest('hex') }, body);
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (attempt) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt * Math.random()));
    // Signed per attempt: the signature carries the time.
    const signed = await signer(service).sign(toSign);
    const { host: _host, ...sendHeaders } = signed.headers; // fetch sets Host from the URL (the same value)
    try {
      const res = await fetch(url, { method, headers: sendHeaders, body, signal: AbortSignal.timeout(config().awsRequestTimeoutMs) });
      if (res.status < 500) return res;
      last = new Error(`${service} answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    } catch (err) {
      last = err;
    }
  }
  throw new AwsUnavailableError(`${service} ${method} ${url.pathname} failed after 3 attempts`, { cause: last });
}

/** A presigned URL: computed locally (no network), valid `expiresIn` seconds. */
export async function presign(service: 's3', method: string, url: URL, expiresIn: number, signingDate?: Date): Promise<string> {
  // As the SDK's S3 presigner does: the payload is not signed (the holder of the URL sends or gets it).
  const signed = await signer(service).presign(toSignable(method, url, { 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' }), { expiresIn, signingDate });
  const query = Object.entries(signed.query ?? {})
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return `${url.protocol}//${url.host}${url.pathname}?${query}`;
}

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
  const body = (await res.json().catch(() => ({}))) as { SecretString?: string; __type?: string; message?: string; Message?: string };
  if (!res.ok) throw new Error(`Secrets Manager GetSecretValue answered ${res.status}: ${body.__type ?? ''} ${body.message ?? body.Message ?? ''}`);
  return body.SecretString ?? '';
}
