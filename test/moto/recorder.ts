// A recording pass-through in front of moto: every AWS call a function makes goes through it unchanged (same
// Host header, so moto verifies the very signature the SDK made), and is written down with the caller (by
// access key), the AWS operation, and moto's answer. Two things moto does not model are added here, each
// where AWS does it:
// - TransactWriteItems: moto authorizes it as one action; AWS authorizes each item's own action (Put →
//   dynamodb:PutItem, Update → UpdateItem, Delete → DeleteItem, ConditionCheck → ConditionCheckItem). Each
//   item's action is checked here against the caller's policy and, when one is missing, the call is refused
//   with AccessDeniedException as AWS would, without reaching moto (nothing written).
// - Presigned URLs: moto 5.2 with IAM checks on reads only the Authorization header, and answers a presigned
//   GET with a 500. Here the URL's SigV4 query signature is verified (computed independently of the SDK,
//   with the signer's secret key), its expiry checked, and the signer's policy asked for s3:GetObject on
//   arn:aws:s3:::<bucket>/<key> with IAM's wildcard matching; only then are the bytes fetched from moto
//   (with the admin's header-signed request) and returned.
// - Browser POST uploads (a presigned POST): moto does not authorize them; post-upload.ts does, as S3 does.
// - Bucket listings with a prefix: moto's SigV4 check refuses them whatever the signer; list-bucket.ts verifies
//   the signature and the policy's s3:ListBucket (with its s3:prefix condition) and answers from moto's listing.
// - GoneException: moto's @connections API accepts a post to any id; a connection the test marks gone is
//   answered 410 after moto has authorized the post.
import { createHash, createHmac } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../lib/local/ports';
import { isPostUpload, policyAllows, postUpload } from './post-upload';
import { isPrefixListing, prefixListing } from './list-bucket';

export interface Call {
  /** The function (or 'admin') whose access key signed the call. */
  caller: string;
  service: string;
  /** The operation: X-Amz-Target's, or for S3 and @connections derived from the method and path. */
  operation: string;
  status: number;
  /** AWS's error code (x-amzn-errortype, __type or <Code>), when it failed. */
  errorType?: string;
  message?: string;
  /** For TransactWriteItems: the IAM action of each item. */
  itemActions?: string[];
  /** The item action a transaction was refused for (the per-item check). */
  deniedAction?: string;
}

export interface Recorder {
  endpoint: string;
  calls: Call[];
  /** Access key id → who it belongs to. */
  owners: Map<string, string>;
  /** Access key id → its secret (to verify presigned URLs). */
  secrets: Map<string, string>;
  /** Who → its current policy document (for presigned URLs). */
  policies: Map<string, { Statement: { Effect: string; Action: string | string[]; Resource: string | string[] }[] }>;
  /** Who → the IAM actions its current policy allows (for the per-item check of transactions). */
  allowed: Map<string, Set<string>>;
  /** Connection ids whose posts are answered 410 Gone (after moto authorized them). */
  gone: Set<string>;
  /** Frames moto accepted, per connection id. */
  frames: Map<string, string[]>;
  stop(): Promise<void>;
}

/** S3 REST methods → the operation (and IAM action) they are, for the objects the functions touch. */
const S3_OPERATIONS: Record<string, string> = { PUT: 'PutObject', GET: 'GetObject', DELETE: 'DeleteObject' };

const ITEM_ACTIONS: Record<string, string> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };

function credentialOf(headers: IncomingHttpHeaders, url: URL): string[] | undefined {
  const auth = headers.authorization;
  const scope = auth ? /Credential=([^,\s]+)/.exec(auth)?.[1] : (url.searchParams.get('X-Amz-Credential') ?? undefined);
  return scope?.split('/');
}

function errorOf(status: number, headers: IncomingHttpHeaders, body: string): { errorType?: string; message?: string } {
  if (status < 400) return {};
  let errorType = String(headers['x-amzn-errortype'] ?? '').split(':')[0] || undefined;
  let message: string | undefined;
  try {
    const json = JSON.parse(body) as { __type?: string; code?: string; message?: string; Message?: string };
    errorType ??= String(json.__type ?? json.code ?? '').split('#').pop() || undefined;
    message = json.message ?? json.Message;
  } catch {
    errorType ??= /<Code>([^<]*)<\/Code>/.exec(body)?.[1];
    message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1];
  }
  return { errorType, message: message ?? body.slice(0, 300) };
}

const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** Why a presigned GET is refused, or undefined when its signature, expiry and the signer's policy allow it. */
export function presignedRefusal(
  method: string,
  url: URL,
  rawPath: string,
  host: string,
  secret: string | undefined,
  policy: Recorder['policies'] extends Map<string, infer P> ? P | undefined : never,
): { code: string; message: string } | undefined {
  const q = url.searchParams;
  const [keyId, date, region, service] = (q.get('X-Amz-Credential') ?? '').split('/');
  if (!secret) return { code: 'InvalidAccessKeyId', message: `unknown access key ${keyId}` };
  const amzDate = q.get('X-Amz-Date') ?? '';
  const signedHeaders = q.get('X-Amz-SignedHeaders') ?? '';
  const query = [...q.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  if (signedHeaders !== 'host') return { code: 'SignatureDoesNotMatch', message: `signed headers ${signedHeaders}: the test verifies host only` };
  const canonical = [method, rawPath, query, `host:${host}\n`, signedHeaders, 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  if (hmac(key, toSign).toString('hex') !== q.get('X-Amz-Signature')) return { code: 'SignatureDoesNotMatch', message: 'the presigned URL\'s signature does not match' };
  const signedAt = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (Date.now() > signedAt + Number(q.get('X-Amz-Expires')) * 1000) return { code: 'AccessDenied', message: 'Request has expired' };
  const resource = `arn:aws:s3:::${decodeURIComponent(rawPath.slice(1))}`;
  const allowed = policyAllows(policy, 's3:GetObject', resource);
  return allowed ? undefined : { code: 'AccessDenied', message: `not authorized to perform: s3:GetObject on ${resource}` };
}

export async function startRecorder(motoEndpoint: string, adminKeys: () => { accessKeyId: string; secretAccessKey: string }): Promise<Recorder> {
  const moto = new URL(motoEndpoint);
  const port = await freePort();
  const calls: Call[] = [];
  const owners = new Map<string, string>();
  const allowed = new Map<string, Set<string>>();
  const secrets = new Map<string, string>();
  const policies: Recorder['policies'] = new Map();
  const gone = new Set<string>();
  const frames = new Map<string, string[]>();

  // One call in moto at a time, each to its answer: moto_server's backends hold no lock, and a TransactWriteItems
  // deep-copies the whole table (its rollback point) while a query on an index walks every item; another
  // thread's write meanwhile fails either with a 500 (RuntimeError: dictionary changed size during iteration).
  let turn: Promise<void> = Promise.resolve();
  const server: Server = createServer((req, res) => {
    let closed = false;
    const answered = new Promise<void>((r) => res.once('close', () => ((closed = true), r())));
    // A call whose caller gave up while it waited its turn (the SDK's timeout, then its retry) is not sent. One
    // whose caller gave up while moto ran it holds the turn until moto is done.
    turn = turn.then(() => (closed ? undefined : Promise.all([forward(req, res).catch(() => undefined), answered]).then(() => undefined)));
  });
  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    const cred = credentialOf(req.headers, url);
    const caller = (cred && owners.get(cred[0])) ?? `unknown key ${cred?.[0]}`;
    const service = cred?.[3] ?? 'unsigned';
    const connection = /^\/@connections\/([^/]+)$/.exec(url.pathname)?.[1];
    const target = req.headers['x-amz-target'];
    const operation = target
      ? String(target).split('.').pop()!
      : connection
        ? `${req.method === 'POST' ? 'PostToConnection' : req.method === 'DELETE' ? 'DeleteConnection' : 'GetConnection'}`
        : service === 's3'
          ? `${req.method === 'GET' && /^\/[^/]+\/?$/.test(url.pathname) ? 'ListBucket' : (S3_OPERATIONS[req.method ?? ''] ?? req.method)} ${url.pathname}`
          : 'unknown';
    const call: Call = { caller, service, operation, status: 0 };
    calls.push(call);

    if (isPostUpload(req.method, req.headers)) {
      const out = await postUpload({
        bucket: url.pathname.split('/')[1],
        headers: req.headers,
        body,
        secretOf: (keyId) => secrets.get(keyId),
        policyOf: (keyId) => policies.get(owners.get(keyId) ?? ''),
        motoEndpoint,
        admin: adminKeys(),
      }).catch((err) => ({ keyId: '', status: 500, code: 'InternalError', message: String(err), deniedAction: undefined }));
      Object.assign(call, { caller: owners.get(out.keyId) ?? caller, service: 's3', operation: `PutObject POST ${url.pathname}`, status: out.status });
      if (out.status >= 300) {
        Object.assign(call, { errorType: out.code, message: out.message, deniedAction: out.deniedAction });
        const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${out.code}</Code><Message>${out.message}</Message></Error>`;
        res.writeHead(out.status, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(xml)) }).end(xml);
      } else {
        res.writeHead(204).end();
      }
      return;
    }

    if (service === 's3' && isPrefixListing(req.method, url)) {
      const signer = { keyId: cred?.[0] ?? '', secret: cred && secrets.get(cred[0]), policy: policies.get(caller) };
      const out = await prefixListing(req, url, signer, async (bucket) => {
        const s3 = new S3Client({ endpoint: motoEndpoint, region: cred![2], forcePathStyle: true, credentials: adminKeys() });
        try {
          const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
          return (listed.Contents ?? []).map((o) => ({ key: o.Key as string, size: o.Size ?? 0 }));
        } finally {
          s3.destroy();
        }
      }).catch((err) => ({ status: 500, code: 'InternalError', message: String(err), xml: undefined }));
      Object.assign(call, { status: out.status, ...(out.code && { errorType: out.code, message: out.message, ...(out.code === 'AccessDenied' && { deniedAction: 's3:ListBucket' }) }) });
      const xml = out.xml ?? `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${out.code}</Code><Message>${out.message}</Message></Error>`;
      res.writeHead(out.status, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(xml)) }).end(xml);
      return;
    }

    if (service === 's3' && url.searchParams.has('X-Amz-Signature') && !req.headers.authorization) {
      const rawPath = (req.url ?? '/').split('?')[0];
      const refusal = presignedRefusal(req.method ?? 'GET', url, rawPath, String(req.headers.host), cred && secrets.get(cred[0]), policies.get(caller));
      if (refusal) {
        Object.assign(call, { status: 403, errorType: refusal.code, message: refusal.message, ...(refusal.code === 'AccessDenied' && { deniedAction: 's3:GetObject' }) });
        const xml = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`;
        res.writeHead(403, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(xml)) }).end(xml);
        return;
      }
      try {
        const [bucket, ...key] = decodeURIComponent(rawPath.slice(1)).split('/');
        const s3 = new S3Client({ endpoint: motoEndpoint, region: cred![2], forcePathStyle: true, credentials: adminKeys() });
        const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key.join('/') }));
        const bytes = Buffer.from(await out.Body!.transformToByteArray());
        s3.destroy();
        call.status = 200;
        res.writeHead(200, { 'content-type': out.ContentType ?? 'application/octet-stream', 'content-length': String(bytes.length) }).end(bytes);
      } catch (err) {
        Object.assign(call, { status: 500, message: String(err) });
        res.writeHead(500).end(String(err));
      }
      return;
    }

    let itemActions: string[] | undefined;
    if (operation === 'TransactWriteItems') {
      const items = (JSON.parse(body.toString()) as { TransactItems: Record<string, unknown>[] }).TransactItems;
      itemActions = items.map((item) => `dynamodb:${ITEM_ACTIONS[Object.keys(item)[0]]}`);
      call.itemActions = itemActions;
    }

    const upstream = request(
      { host: moto.hostname, port: moto.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        const out: Buffer[] = [];
        up.on('data', (d: Buffer) => out.push(d));
        up.on('end', () => {
          let status = up.statusCode ?? 0;
          let headers: IncomingHttpHeaders = up.headers;
          let payload = Buffer.concat(out);
          if (status < 400 && connection && req.method === 'POST') {
            if (gone.has(connection)) {
              status = 410;
              payload = Buffer.from(JSON.stringify({ message: 'Gone (the test marked this connection gone)' }));
              headers = { 'content-type': 'application/json', 'x-amzn-errortype': 'GoneException' };
            } else {
              frames.set(connection, [...(frames.get(connection) ?? []), body.toString()]);
            }
          }
          call.status = status;
          Object.assign(call, errorOf(status, headers, payload.toString()));
          const h = { ...headers, 'content-length': String(payload.length) };
          delete h['transfer-encoding'];
          res.writeHead(status, h);
          res.end(payload);
        });
      },
    );
    upstream.on('error', (err) => {
      call.status = 599;
      call.message = String(err);
      res.destroy();
    });
    // Each item's action first (AWS's rule), then moto (signature, and dynamodb:TransactWriteItems itself).
    if (itemActions) {
      const missing = itemActions.find((a) => !allowed.get(caller)?.has(a) && !allowed.get(caller)?.has('*'));
      if (missing) {
        upstream.destroy();
        call.status = 400;
        call.errorType = 'AccessDeniedException';
        call.deniedAction = missing;
        call.message = `User: ${caller} is not authorized to perform: ${missing} (a TransactWriteItems item; checked by the test's proxy, as AWS does)`;
        const payload = JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', message: call.message });
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-errortype': 'AccessDeniedException', 'content-length': String(Buffer.byteLength(payload)) });
        res.end(payload);
        return;
      }
    }
    const done = new Promise((r) => upstream.once('close', r));
    upstream.end(body);
    await done;
  };
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    owners,
    allowed,
    secrets,
    policies,
    gone,
    frames,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
