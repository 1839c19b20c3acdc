// What every function's flow (moto tier) is made of: the admin clients, the calls to a function's handler (HTTP,
// WebSocket, with its own policy or a changed one), the checks of what it answered, and helpers the flows share
// (a session, uploads, a socket, a table item, a queue's messages).
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NOT_FOUND, ROUTES, type RouteDef } from '../../lib/routes';
import { bodyOf, httpEvent, json, multipart, wsEvent, type Handle, type Harness, type HttpRequestSpec, type HttpResult } from './harness';
import { REGION } from './template';

// A 1×1 PNG.
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const route = (id: string): RouteDef => {
  const r = ROUTES.find((x) => x.id === id);
  if (!r) throw new Error(`no route ${id}`);
  return r;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Any = any;

export interface Session {
  token: string;
  userId: string;
  realtimeToken: string;
  channel: string;
}

export class FlowBase {
  /** Handles of functions with their full policy. */
  protected handles: Record<string, Handle> = {};
  /** The function under test, with a changed policy (a cold start of its own). */
  override?: Handle;
  ctx: Any = {};
  protected admin: DynamoDBDocumentClient;
  protected sqs: SQSClient;

  constructor(protected hx: Harness) {
    const opts = { endpoint: hx.rec.endpoint, region: REGION, credentials: hx.keys.admin };
    this.admin = DynamoDBDocumentClient.from(new DynamoDBClient(opts));
    this.sqs = new SQSClient(opts);
  }

  destroy(): void {
    this.admin.destroy();
    this.sqs.destroy();
  }

  fn(id: string): Handle {
    if (this.override?.id === id) return this.override;
    return (this.handles[id] ??= this.hx.load(id));
  }

  async http(id: string, spec: HttpRequestSpec = {}): Promise<HttpResult> {
    const def = id === NOT_FOUND.id ? ({ ...NOT_FOUND, method: 'GET', path: '/nowhere' } as RouteDef) : route(id);
    return this.hx.invoke<HttpResult>(this.fn(id), httpEvent(def, spec));
  }

  protected expectStatus(r: HttpResult, status: number, what: string): Any {
    if (r.statusCode !== status) throw new Error(`${what}: expected ${status}, got ${r.statusCode} ${r.body ?? ''}`);
    return bodyOf(r);
  }

  /** Fetches a presigned URL (from moto, through the recorder) and checks the bytes. */
  protected async download(url: string, bytes: Buffer, what: string): Promise<void> {
    const res = await fetch(url);
    const got = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${what}: presigned GET answered ${res.status} ${got.toString().slice(0, 300)}`);
    if (!got.equals(bytes)) throw new Error(`${what}: presigned GET returned other bytes`);
  }

  protected auth = (token: string) => ({ authorization: `Bearer ${token}` });

  protected get botAuth() {
    return { authorization: `Bearer ${this.ctx.botA.secretKey}` };
  }

  protected async session(externalId?: string, fnId = 'create_session'): Promise<Session> {
    const r = await this.http(fnId, json({ client_key: this.ctx.botA.client_key, ...(externalId && { external_id: externalId }) }));
    const b = this.expectStatus(r, 200, 'session');
    return { token: b.session_token, userId: b.user.id, realtimeToken: b.realtime?.token, channel: b.realtime?.channel };
  }

  protected async upload(fnId: string, headers: Record<string, string>, fields: Record<string, string> = {}): Promise<Any> {
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    const file = this.expectStatus(await this.http(fnId, { ...multipart('pixel.png', 'image/png', bytes, fields), headers }), 201, `${fnId}`);
    await this.download(file.url, bytes, `${fnId} url`);
    return { ...file, bytes };
  }

  /** A direct upload: the ticket from `fnId`, then the browser's POST of the bytes (to moto, through the recorder). */
  protected async directUpload(fnId: 'create_upload' | 'bot_create_upload', headers: Record<string, string>, body: object, bytes: Buffer, mime: string): Promise<Any> {
    const ticket = this.expectStatus(await this.http(fnId, { ...json(body), headers }), 201, fnId);
    const form = new FormData();
    for (const [k, v] of Object.entries(ticket.upload.fields as Record<string, string>)) form.append(k, v);
    form.append('file', new Blob([bytes], { type: mime }), 'upload.bin');
    const res = await fetch(ticket.upload.url, { method: 'POST', body: form });
    if (res.status !== 204) throw new Error(`${fnId}: the POST upload answered ${res.status} ${await res.text()}`);
    return { ...ticket, bytes };
  }

  protected photoUpload(): Promise<Any> {
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    return this.directUpload('create_upload', this.auth(this.ctx.user.token), { name: 'big.png', size: bytes.length, mime_type: 'image/png' }, bytes, 'image/png');
  }

  /** Straight to moto (not through the recorder, which would count the 404 as a refused call). */
  protected async expectNoObject(key: string, failure: string): Promise<void> {
    const found = await this.withAdminS3((s3) =>
      s3.send(new GetObjectCommand({ Bucket: this.hx.stack.bucket, Key: key })).then(
        () => true,
        (err: Error) => (err.name === 'NoSuchKey' ? false : Promise.reject(err)),
      ),
    );
    if (found) throw new Error(failure);
  }

  protected async withAdminS3<T>(use: (s3: S3Client) => Promise<T>): Promise<T> {
    const s3 = new S3Client({ endpoint: this.hx.moto.endpoint, region: REGION, forcePathStyle: true, credentials: this.hx.keys.admin });
    try {
      return await use(s3);
    } finally {
      s3.destroy();
    }
  }

  protected async history(fnId: string, headers: Record<string, string>): Promise<void> {
    const params = { chat_id: this.ctx.chat.id };
    const all = this.expectStatus(await this.http(fnId, { params, headers }), 200, `${fnId}`);
    if (all.length < 5) throw new Error(`${fnId}: ${all.length} messages`);
    const ids = all.map((m: Any) => m.id).sort();
    const page = this.expectStatus(await this.http(fnId, { params, headers, query: { limit: '2' } }), 200, `${fnId} limit`);
    if (page.length !== 2) throw new Error(`${fnId} limit=2 gave ${page.length}`);
    const before = this.expectStatus(await this.http(fnId, { params, headers, query: { limit: '2', before: ids[2] } }), 200, `${fnId} before`);
    if (before.map((m: Any) => m.id).sort().join() !== ids.slice(0, 2).join()) throw new Error(`${fnId} before: wrong page`);
    const after = this.expectStatus(await this.http(fnId, { params, headers, query: { after: ids[ids.length - 2] } }), 200, `${fnId} after`);
    if (after.map((m: Any) => m.id).join() !== ids[ids.length - 1]) throw new Error(`${fnId} after: wrong page`);
    const photo = all.find((m: Any) => m.id === this.ctx.photo.message.id);
    await this.download(photo.files[0].url, this.ctx.photo.bytes, `${fnId} file url`);
  }

  protected async ws(id: 'ws_connect' | 'ws_default' | 'ws_disconnect', event: unknown): Promise<Any> {
    return this.hx.invoke(this.fn(id), event);
  }

  /** A socket of the user: $connect with its realtime token, then connect and subscribe (one frame or two). */
  protected async socket(oneFrame: boolean): Promise<string> {
    const conn = randomUUID();
    const { realtimeToken: token, channel } = this.ctx.user;
    const open = await this.ws('ws_connect', wsEvent('$connect', conn, { query: { token } }));
    if (open.statusCode !== 200) throw new Error(`$connect: ${open.statusCode} ${open.body ?? ''}`);
    const connect = JSON.stringify({ id: 1, connect: { token } });
    const subscribe = JSON.stringify({ id: 2, subscribe: { channel } });
    const frames = oneFrame ? [`${connect}\n${subscribe}`] : [connect, subscribe];
    const replies: string[] = [];
    for (const body of frames) {
      const r = await this.ws('ws_default', wsEvent('$default', conn, { body }));
      if (r.statusCode !== 200) throw new Error(`$default: ${r.statusCode}`);
      replies.push(...String(r.body ?? '').split('\n'));
    }
    const parsed = replies.map((l) => JSON.parse(l));
    if (!parsed.some((p) => p.id === 1 && p.connect) || !parsed.some((p) => p.id === 2 && p.subscribe)) {
      throw new Error(`connect/subscribe refused: ${replies.join(' | ')}`);
    }
    return conn;
  }

  protected async item(pk: string, sk: string): Promise<Any> {
    const out = await this.admin.send(new GetCommand({ TableName: this.hx.stack.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return out.Item;
  }

  protected async receive(queue: 'webhooks' | 'webhooks_dlq' | 'tasks'): Promise<Any[]> {
    const url = this.queueUrl({ webhooks: 'WebhookQueue', webhooks_dlq: 'WebhookDlq', tasks: 'TaskQueue' }[queue]);
    const got: Any[] = [];
    for (;;) {
      const out = await this.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }));
      if (!out.Messages?.length) return got;
      got.push(...out.Messages);
    }
  }

  protected queueUrl(prefix: string): string {
    const [, url] = Object.entries(this.hx.stack.queueUrls).find(([id]) => id.startsWith(prefix) && id.slice(prefix.length).length === 8)!;
    return url;
  }

  protected queueArn(prefix: string): string {
    const id = Object.keys(this.hx.stack.queueUrls).find((q) => q.startsWith(prefix) && q.slice(prefix.length).length === 8)!;
    return this.hx.stack.refs[id].attrs.Arn;
  }
}
