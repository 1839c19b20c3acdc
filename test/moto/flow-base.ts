// What every function's flow (moto tier) is made of: the admin clients, the calls to a function's handler (HTTP,
// WebSocket, with its own policy or a changed one), the checks of what it answered, and helpers the flows share
// (a session, uploads, a socket, a table item, a queue's messages).
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { DeleteMessageBatchCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient, type Message as QueuedMessage } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NOT_FOUND, ROUTES, type RouteDef } from '../../lib/routes';
import { bodyOf, httpEvent, json, multipart, sqsEvent, wsEvent, type HttpRequestSpec, type HttpResult } from './events';
import type { Handle, Harness } from './harness';
import { REGION } from './template';
import { firstFileUrl, present, type Chat, type FileInfo, type Message, type Schemas } from '../support/contract';
import type { Frame } from '../support/realtime';
import { keys } from '../../lambdas/entities/keys';
import type { Bot } from '../../lambdas/entities/bots';
import type { WebhookJob } from '../../lambdas/flows/webhook-events';
import type { ReminderJob } from '../../lambdas/flows/reminders';
import type { TaskJob } from '../../lambdas/entities/tasks';

// A 1×1 PNG.
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const route = (id: string): RouteDef => {
  const r = ROUTES.find((x) => x.id === id);
  if (!r) throw new Error(`no route ${id}`);
  return r;
};

export interface Session {
  token: string;
  userId: string;
  /** The session's realtime block (absent when realtime is off; create_session fails then). */
  realtimeToken?: string;
  channel?: string;
}

/** A file uploaded through a function, with the bytes sent. */
export type Upload = FileInfo & { bytes: Buffer };
/** A direct upload's ticket, with the bytes POSTed. */
export type DirectUpload = Schemas['UploadTicket'] & { bytes: Buffer };
/** A queued job's body: a webhook job, an unread reminder, or a task's job (each field where one of them has it). */
export type Job = Partial<Omit<WebhookJob, 'kind'> & Omit<ReminderJob, 'kind'> & TaskJob> & { kind?: WebhookJob['kind'] | ReminderJob['kind']; lane?: 'slow' };
/** What a stream or queue consumer answers: the records it failed. */
export interface BatchResult {
  batchItemFailures: { itemIdentifier: string }[];
}
/** An item of the table as the admin client reads it. */
export type Item = Record<string, unknown>;

/** What a flow keeps for the flows after it (set by the flow named; read through need()). */
export interface FlowContext {
  /** bots(): bot A with its secret key, bot B verifying identities. */
  botA?: Bot & { secretKey: string };
  botB?: Bot;
  /** create_session: the user of the flows. */
  user?: Session;
  /** create_chat: the user's chat. */
  chat?: Chat;
  /** upload_file, bot_upload_file: a file each (for a flow run again with the uploader's policy changed). */
  file?: Upload;
  botFile?: Upload;
  /** upload_completer: a direct upload settled as uploaded. */
  uploaded?: DirectUpload;
  /** create_message: the photo message and its file's bytes; `messages` once the history's pages are sent. */
  photo?: { message: Message; bytes: Buffer };
  messages?: boolean;
  /** webhook_dispatcher: the jobs it queued. */
  jobs?: QueuedMessage[];
  /** bot_delete_user: the erasure's task id. */
  eraseTask?: string;
}

export class FlowBase {
  /** Handles of functions with their full policy. */
  protected handles: Record<string, Handle> = {};
  /** The function under test, with a changed policy (a cold start of its own). */
  override?: Handle;
  ctx: FlowContext = {};
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

  /** A field of ctx an earlier flow sets (fails naming it when that flow has not run). */
  protected need<K extends keyof FlowContext>(key: K): NonNullable<FlowContext[K]> {
    return present(this.ctx[key], `ctx.${key} (set by an earlier flow)`) as NonNullable<FlowContext[K]>;
  }

  /** The reply's body, as the contract types the reply of this status (T at the call site). */
  protected expectStatus<T = unknown>(r: HttpResult, status: number, what: string): T {
    if (r.statusCode !== status) throw new Error(`${what}: expected ${status}, got ${r.statusCode} ${r.body ?? ''}`);
    return bodyOf(r) as T;
  }

  /** A queued message's job. */
  protected jobOf(m: QueuedMessage): Job {
    return JSON.parse(present(m.Body, 'a queued message\'s body')) as Job;
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
    return { authorization: `Bearer ${this.need('botA').secretKey}` };
  }

  protected async session(externalId?: string, fnId = 'create_session'): Promise<Session> {
    const r = await this.http(fnId, json({ client_key: this.need('botA').client_key, ...(externalId && { external_id: externalId }) }));
    const b = this.expectStatus<Schemas['Session']>(r, 200, 'session');
    return { token: b.session_token, userId: b.user.id, realtimeToken: b.realtime?.token, channel: b.realtime?.channel };
  }

  protected async upload(fnId: string, headers: Record<string, string>, fields: Record<string, string> = {}): Promise<Upload> {
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    const file = this.expectStatus<FileInfo>(await this.http(fnId, { ...multipart('pixel.png', 'image/png', bytes, fields), headers }), 201, `${fnId}`);
    await this.download(present(file.url, `${fnId}: the file's url`), bytes, `${fnId} url`);
    return { ...file, bytes };
  }

  /** A direct upload: the ticket from `fnId`, then the browser's POST of the bytes (to moto, through the recorder). */
  protected async directUpload(fnId: 'create_upload' | 'bot_create_upload', headers: Record<string, string>, body: object, bytes: Buffer, mime: string): Promise<DirectUpload> {
    const ticket = this.expectStatus<Schemas['UploadTicket']>(await this.http(fnId, { ...json(body), headers }), 201, fnId);
    const form = new FormData();
    for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
    form.append('file', new Blob([bytes], { type: mime }), 'upload.bin');
    const res = await fetch(ticket.upload.url, { method: 'POST', body: form });
    if (res.status !== 204) throw new Error(`${fnId}: the POST upload answered ${res.status} ${await res.text()}`);
    return { ...ticket, bytes };
  }

  protected photoUpload(): Promise<DirectUpload> {
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    return this.directUpload('create_upload', this.auth(this.need('user').token), { name: 'big.png', size: bytes.length, mime_type: 'image/png' }, bytes, 'image/png');
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
    const params = { chat_id: this.need('chat').id };
    const all = this.expectStatus<Message[]>(await this.http(fnId, { params, headers }), 200, `${fnId}`);
    if (all.length < 5) throw new Error(`${fnId}: ${all.length} messages`);
    const ids = all.map((m) => m.id).sort();
    const page = this.expectStatus<Message[]>(await this.http(fnId, { params, headers, query: { limit: '2' } }), 200, `${fnId} limit`);
    if (page.length !== 2) throw new Error(`${fnId} limit=2 gave ${page.length}`);
    const before = this.expectStatus<Message[]>(await this.http(fnId, { params, headers, query: { limit: '2', before: ids[2] } }), 200, `${fnId} before`);
    if (before.map((m) => m.id).sort().join() !== ids.slice(0, 2).join()) throw new Error(`${fnId} before: wrong page`);
    const after = this.expectStatus<Message[]>(await this.http(fnId, { params, headers, query: { after: ids[ids.length - 2] } }), 200, `${fnId} after`);
    if (after.map((m) => m.id).join() !== ids[ids.length - 1]) throw new Error(`${fnId} after: wrong page`);
    const sent = this.need('photo');
    const photo = present(all.find((m) => m.id === sent.message.id), `${fnId}: the photo message`);
    await this.download(firstFileUrl(photo), sent.bytes, `${fnId} file url`);
  }

  protected async ws(id: 'ws_connect' | 'ws_default' | 'ws_disconnect', event: unknown): Promise<HttpResult> {
    return this.hx.invoke<HttpResult>(this.fn(id), event);
  }

  /** A session's realtime block (the flows' user's unless given); realtime is on in the tier's stack. */
  protected realtime(s: Session = this.need('user')): { token: string; channel: string } {
    return { token: present(s.realtimeToken, 'the realtime token'), channel: present(s.channel, 'the realtime channel') };
  }

  /** A socket of the user: $connect with its realtime token, then connect and subscribe (one frame or two; recoverable, as the client package subscribes, or plain). */
  protected async socket(oneFrame: boolean, recoverable = true): Promise<string> {
    const conn = randomUUID();
    const { token, channel } = this.realtime();
    const open = await this.ws('ws_connect', wsEvent('$connect', conn, { query: { token } }));
    if (open.statusCode !== 200) throw new Error(`$connect: ${open.statusCode} ${open.body ?? ''}`);
    const connect = JSON.stringify({ id: 1, connect: { token } });
    const subscribe = JSON.stringify({ id: 2, subscribe: { channel, ...(recoverable && { recoverable }) } });
    const frames = oneFrame ? [`${connect}\n${subscribe}`] : [connect, subscribe];
    for (const body of frames) {
      const r = await this.ws('ws_default', wsEvent('$default', conn, { body }));
      if (r.statusCode !== 200) throw new Error(`$default: ${r.statusCode}`);
      if (r.body) this.hx.rec.frames.set(conn, [...(this.hx.rec.frames.get(conn) ?? []), r.body]);
    }
    // A frame with a subscribe is answered through the @connections API (the hand-over follows its reply).
    const replies = this.framesOf(conn);
    if (!replies.some((p) => p.id === 1 && p.connect) || !replies.some((p) => p.id === 2 && p.subscribe)) throw new Error(`connect/subscribe refused: ${JSON.stringify(replies)}`);
    return conn;
  }

  /** Every frame a socket got (the @connections API's posts, and route responses the flows keep), line by line. */
  protected framesOf(conn: string): Frame[] {
    return (this.hx.rec.frames.get(conn) ?? []).flatMap((f) => f.split('\n')).map((l) => JSON.parse(l) as Frame);
  }

  /** An item of the table (T: the entity's record type, where the flow reads its fields). */
  protected async item<T extends object = Item>(pk: string, sk: string): Promise<T | undefined> {
    const out = await this.admin.send(new GetCommand({ TableName: this.hx.stack.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return out.Item as T | undefined;
  }

  protected async receive(queue: 'webhooks' | 'webhooks_slow' | 'webhooks_dlq' | 'tasks'): Promise<QueuedMessage[]> {
    const url = this.queueUrl({ webhooks: 'WebhookQueue', webhooks_slow: 'WebhookSlowQueue', webhooks_dlq: 'WebhookDlq', tasks: 'TaskQueue' }[queue]);
    const got: QueuedMessage[] = [];
    for (;;) {
      const out = await this.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }));
      if (!out.Messages?.length) return got;
      got.push(...out.Messages);
      // Taken off the queue, as a consumer does: one received in an earlier flow never comes back to a later one
      // (a queue shows a received message again once its visibility timeout is over).
      const entries = out.Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle }));
      await this.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: entries }));
    }
  }

  /**
   * A stream consumer's redo path: `broken` fails every try, so it is set aside (the record on the consumer's redo
   * queue; the publisher holds its channel) and the batch succeeds; then, the fault gone, the redo queue's message
   * (carrying `fixed`) runs and releases the publisher's hold.
   */
  protected async redo(fn: string, queuePrefix: string, broken: DynamoDBRecord, fixed: DynamoDBRecord): Promise<void> {
    const aside = await this.hx.invoke<BatchResult>(this.fn(fn), { Records: [broken] });
    if (aside.batchItemFailures.length) throw new Error(`${fn}: a failing record was reported, not set aside`);
    const url = this.queueUrl(queuePrefix);
    const out = await this.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }));
    const [message, ...more] = out.Messages ?? [];
    if (!message || more.length) throw new Error(`${fn}: ${out.Messages?.length ?? 0} messages on the redo queue, not 1`);
    const { lane } = JSON.parse(message.Body!) as { lane: string };
    const event = sqsEvent(`arn:aws:sqs:${REGION}:000000000000:redo`, [{ ...message, Body: JSON.stringify({ lane, record: fixed }) }]);
    event.Records[0].attributes.MessageGroupId = lane;
    const redone = await this.hx.invoke<BatchResult>(this.fn(fn), event);
    if (redone.batchItemFailures.length) throw new Error(`${fn}: the redo failed`);
    await this.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
    // The publisher holds a lane (a channel) while its records wait; the dispatcher keeps no hold.
    const hold = fn === 'publisher' && (await this.admin.send(new GetCommand({ TableName: this.hx.stack.tableName, Key: keys.publisherHold(lane), ConsistentRead: true })));
    if (hold && hold.Item) throw new Error(`${fn}: the redo left its user held`);
  }

  /**
   * A fresh start for a stream consumer's flow: no channel held and no record waiting on a redo queue. A variant
   * whose refusal set a user aside leaves both behind, and every later run of the publisher would then send that
   * user's records straight to the redo queue, calling nothing more that could be refused.
   */
  async clearStreamHolds(): Promise<void> {
    const held = await this.admin.send(new ScanCommand({ TableName: this.hx.stack.tableName, FilterExpression: 'sk = :hold', ExpressionAttributeValues: { ':hold': keys.publisherHold('').sk } }));
    for (const item of held.Items ?? []) await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: { pk: String(item.pk), sk: String(item.sk) } }));
    for (const prefix of ['PublisherRedoQueue', 'WebhookDispatcherRedoQueue']) {
      const url = this.queueUrl(prefix);
      for (;;) {
        const out = await this.sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
        if (!out.Messages?.length) break;
        for (const m of out.Messages) await this.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
      }
    }
  }

  /** A queue of the stack by its logical id's prefix (CDK adds an 8-character hash): its URL and ARN. */
  private queueId = (prefix: string) => Object.keys(this.hx.stack.queueUrls).find((q) => q.startsWith(prefix) && q.slice(prefix.length).length === 8)!;
  protected queueUrl = (prefix: string): string => this.hx.stack.queueUrls[this.queueId(prefix)];
  protected queueArn = (prefix: string): string => this.hx.stack.refs[this.queueId(prefix)].attrs.Arn;
}
