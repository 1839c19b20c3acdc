// One flow per function: requests that make every AWS call the function makes, with the statuses a
// working function answers. A flow uses the other functions (their own users, full policies) for what it
// needs first, so it runs again on its own with a changed policy for the function under test.
import { createHmac, randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { NOT_FOUND, ROUTES, type RouteDef } from '../../lib/routes';
import { PUBLISHER, WEBHOOK_DISPATCHER } from '../../lib/consumers';
import { bodyOf, httpEvent, json, multipart, sqsEvent, wsEvent, type Handle, type Harness, type HttpRequestSpec, type HttpResult } from './harness';
import { REGION } from './template';
import { keys } from '../../lambdas/domain/keys';

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const route = (id: string): RouteDef => {
  const r = ROUTES.find((x) => x.id === id);
  if (!r) throw new Error(`no route ${id}`);
  return r;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

interface Session {
  token: string;
  userId: string;
  realtimeToken: string;
  channel: string;
}

export class CoreFlows {
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

  /** Bots made as the bot CLI does (lambdas/domain/bots.ts with admin credentials): A with a webhook and unread reminders, B verifying identities. */
  async bots(): Promise<void> {
    const bots = this.hx.admin<typeof import('../../lambdas/domain/bots')>('lambdas/domain/bots');
    const a = await bots.createBot({ name: 'moto A' });
    await bots.updateBot(a.bot.id, { webhook_url: this.hx.webhooks.url, unread_reminder_seconds: 1 });
    const b = await bots.createBot({ name: 'moto B' });
    const updated = await bots.updateBot(b.bot.id, { identity_verification: true });
    this.ctx.botA = { ...a.bot, secretKey: a.secretKey };
    this.ctx.botB = { ...updated.bot };
  }

  protected async session(externalId?: string, fnId = 'create_session'): Promise<Session> {
    const r = await this.http(fnId, json({ client_key: this.ctx.botA.client_key, ...(externalId && { external_id: externalId }) }));
    const b = this.expectStatus(r, 200, 'session');
    return { token: b.session_token, userId: b.user.id, realtimeToken: b.realtime?.token, channel: b.realtime?.channel };
  }

  async create_session(): Promise<void> {
    const ext = `moto-${randomUUID()}`;
    const first = await this.session(ext);
    const again = await this.session(ext);
    if (again.userId !== first.userId) throw new Error('a returning user got another id');
    if (!first.realtimeToken) throw new Error('no realtime block in the session');
    await this.session(undefined); // anonymous visitor
    const { client_key, identity_secret } = this.ctx.botB;
    const hash = createHmac('sha256', identity_secret).update(ext).digest('hex');
    this.expectStatus(await this.http('create_session', json({ client_key, external_id: ext, external_id_hash: hash })), 200, 'verified session');
    this.expectStatus(await this.http('create_session', json({ client_key, external_id: ext, external_id_hash: '0'.repeat(64) })), 403, 'wrong hash');
    this.ctx.user ??= first;
  }

  async create_chat(): Promise<void> {
    const s = this.ctx.user && !this.ctx.chat ? this.ctx.user : await this.session(`moto-${randomUUID()}`, 'create_session');
    const chat = this.expectStatus(await this.http('create_chat', { ...json({ name: 'moto chat' }), headers: this.auth(s.token) }), 201, 'create chat');
    this.ctx.chat ??= chat;
  }

  async list_chats(): Promise<void> {
    const chats = this.expectStatus(await this.http('list_chats', { headers: this.auth(this.ctx.user.token) }), 200, 'list chats');
    if (!chats.some((c: Any) => c.id === this.ctx.chat.id)) throw new Error('the chat is not listed');
  }

  protected async upload(fnId: string, headers: Record<string, string>, fields: Record<string, string> = {}): Promise<Any> {
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    const file = this.expectStatus(await this.http(fnId, { ...multipart('pixel.png', 'image/png', bytes, fields), headers }), 201, `${fnId}`);
    await this.download(file.url, bytes, `${fnId} url`);
    return { ...file, bytes };
  }

  async upload_file(): Promise<void> {
    const file = await this.upload('upload_file', this.auth(this.ctx.user.token));
    this.ctx.file ??= file;
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

  private photoUpload(): Promise<Any> {
    const bytes = Buffer.concat([PNG, Buffer.from(randomUUID())]);
    return this.directUpload('create_upload', this.auth(this.ctx.user.token), { name: 'big.png', size: bytes.length, mime_type: 'image/png' }, bytes, 'image/png');
  }

  async create_upload(): Promise<void> {
    await this.photoUpload();
  }

  async bot_create_upload(): Promise<void> {
    const pdf = Buffer.from(`%PDF-1.7\n${randomUUID()}`);
    await this.directUpload('bot_create_upload', this.botAuth, { chat_id: this.ctx.chat.id, name: 'r.pdf', size: pdf.length, mime_type: 'application/pdf' }, pdf, 'application/pdf');
  }

  /** S3's event for a POSTed object: the completer settles a photo uploaded, and an HTML page rejected and deleted. */
  async upload_completer(): Promise<void> {
    const complete = async (ticket: Any) => {
      const key = ticket.upload.fields.key as string;
      const event = { Records: [{ eventSource: 'aws:s3', eventName: 'ObjectCreated:Post', s3: { bucket: { name: this.hx.stack.bucket }, object: { key, size: ticket.bytes.length } } }] };
      await this.hx.invoke(this.fn('upload_completer'), event);
      return this.item(`FILE#${ticket.file.id}`, 'FILE');
    };
    const photo = await this.photoUpload();
    const done = await complete(photo);
    if (done?.status !== 'uploaded') throw new Error(`the photo ended ${done?.status} ${done?.reason ?? ''}`);
    this.ctx.uploaded ??= photo;
    const page = Buffer.from('<!doctype html><script>alert(1)</script>');
    const html = await this.directUpload('create_upload', this.auth(this.ctx.user.token), { name: 'cat.png', size: page.length, mime_type: 'image/png' }, page, 'image/png');
    const rejected = await complete(html);
    if (rejected?.status !== 'rejected') throw new Error(`the HTML page ended ${rejected?.status}`);
    await this.expectNoObject(html.upload.fields.key, 'the rejected object was kept');
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

  async get_file(): Promise<void> {
    const file = this.expectStatus(await this.http('get_file', { params: { file_id: this.ctx.uploaded.file.id }, headers: this.auth(this.ctx.user.token) }), 200, 'get file');
    if (file.status !== 'uploaded') throw new Error(`get file: ${file.status}`);
    await this.download(file.url, this.ctx.uploaded.bytes, 'get_file url');
  }

  async create_message(): Promise<void> {
    const path = { params: { chat_id: this.ctx.chat.id } };
    const headers = { ...this.auth(this.ctx.user.token), 'idempotency-key': randomUUID() };
    const first = this.expectStatus(await this.http('create_message', { ...path, ...json({ content: 'hello moto' }), headers }), 201, 'send');
    const replay = this.expectStatus(await this.http('create_message', { ...path, ...json({ content: 'hello moto' }), headers }), 200, 'send replayed');
    if (replay.id !== first.id) throw new Error('the replayed send returned another message');
    // A photo: a new upload (upload_file's own user), then a message that carries it.
    const file = this.fn('upload_file') === this.override ? this.ctx.file : await this.upload('upload_file', this.auth(this.ctx.user.token));
    const photo = this.expectStatus(
      await this.http('create_message', { ...path, ...json({ content: '', content_type: 'photo', files: [file.id] }), headers: this.auth(this.ctx.user.token) }),
      201,
      'send with a file',
    );
    await this.download(photo.files[0].url, file.bytes, 'sent file url');
    // A keyed send refused by the rate limit gives its key back (a refused send leaves nothing): the user's
    // window of this minute made full, then emptied again (admin writes).
    const window = Math.floor(Date.now() / 60_000) * 60;
    const rateKey = keys.rateWindow('messages', this.ctx.user.userId, window);
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...rateKey, entity: 'rate', n: 1_000_000, ttl: window + 120 } }));
    try {
      const over = { ...this.auth(this.ctx.user.token), 'idempotency-key': randomUUID() };
      this.expectStatus(await this.http('create_message', { ...path, ...json({ content: 'one too many' }), headers: over }), 429, 'send over the rate');
    } finally {
      await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: rateKey }));
    }
    if (!this.ctx.messages) {
      this.ctx.photo = { message: photo, bytes: file.bytes };
      for (let i = 0; i < 3; i++) {
        this.expectStatus(await this.http('create_message', { ...path, ...json({ content: `page ${i}` }), headers: this.auth(this.ctx.user.token) }), 201, 'send');
      }
      this.ctx.messages = true;
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

  async list_messages(): Promise<void> {
    await this.history('list_messages', this.auth(this.ctx.user.token));
  }

  async mark_read(): Promise<void> {
    this.expectStatus(await this.http('mark_read', { params: { chat_id: this.ctx.chat.id }, headers: this.auth(this.ctx.user.token) }), 200, 'mark read');
  }

  async bot_list_chats(): Promise<void> {
    const first = this.expectStatus(await this.http('bot_list_chats', { headers: this.botAuth, query: { limit: '1' } }), 200, 'bot chats');
    const items = first.items ?? first.chats ?? first.data;
    if (!Array.isArray(items) || items.length !== 1) throw new Error(`bot chats page: ${JSON.stringify(first).slice(0, 300)}`);
    if (first.next_cursor) {
      this.expectStatus(await this.http('bot_list_chats', { headers: this.botAuth, query: { limit: '1', cursor: first.next_cursor } }), 200, 'bot chats next page');
    }
    this.expectStatus(await this.http('bot_list_chats', { headers: this.botAuth }), 200, 'bot chats');
  }

  async bot_list_messages(): Promise<void> {
    await this.history('bot_list_messages', this.botAuth);
  }

  async bot_upload_file(): Promise<void> {
    const file = await this.upload('bot_upload_file', this.botAuth, { chat_id: this.ctx.chat.id });
    this.ctx.botFile ??= file;
  }

  async bot_create_message(): Promise<void> {
    const path = { params: { chat_id: this.ctx.chat.id } };
    const file = this.fn('bot_upload_file') === this.override ? this.ctx.botFile : await this.upload('bot_upload_file', this.botAuth, { chat_id: this.ctx.chat.id });
    const headers = { ...this.botAuth, 'idempotency-key': randomUUID() };
    const body = json({ content: 'a reply', files: [file.id] });
    const first = this.expectStatus(await this.http('bot_create_message', { ...path, ...body, headers }), 201, 'bot reply');
    const replay = this.expectStatus(await this.http('bot_create_message', { ...path, ...body, headers }), 200, 'bot reply replayed');
    if (replay.id !== first.id) throw new Error('the replayed reply returned another message');
    await this.download(first.files[0].url, file.bytes, 'bot reply file url');
    this.expectStatus(await this.http('bot_create_message', { ...path, ...json({ content: 'operator here', sender: 'operator' }), headers: this.botAuth }), 201, 'operator reply');
  }

  /** The bot side edits its reply (a streamed answer): a newer version applies, an older one is a 409. */
  async bot_edit_message(): Promise<void> {
    const params = { chat_id: this.ctx.chat.id };
    const file = await this.upload('bot_upload_file', this.botAuth, { chat_id: this.ctx.chat.id });
    const reply = this.expectStatus(await this.http('bot_create_message', { params, ...json({ content: 'draft', files: [file.id] }), headers: this.botAuth }), 201, 'bot reply');
    const at = { params: { ...params, message_id: reply.id }, headers: this.botAuth };
    const edited = this.expectStatus(await this.http('bot_edit_message', { ...at, ...json({ content: 'final', version: 2 }) }), 200, 'edit');
    if (edited.id !== reply.id || edited.content !== 'final' || !edited.is_edited) throw new Error(`edit: ${JSON.stringify(edited).slice(0, 300)}`);
    await this.download(edited.files[0].url, file.bytes, 'edited message file url');
    this.expectStatus(await this.http('bot_edit_message', { ...at, ...json({ content: 'stale', version: 1 }) }), 409, 'an older edit');
    const userMessage = this.expectStatus(
      await this.http('create_message', { params, ...json({ content: 'mine' }), headers: this.auth(this.ctx.user.token) }),
      201,
      'send',
    );
    this.expectStatus(await this.http('bot_edit_message', { params: { ...params, message_id: userMessage.id }, headers: this.botAuth, ...json({ content: 'x' }) }), 403, "editing the user's message");
  }

  /** The bot side typing: the bot, then an operator, then the bot again (coalesced). */
  async bot_typing(): Promise<void> {
    const at = { params: { chat_id: this.ctx.chat.id }, headers: this.botAuth };
    this.expectStatus(await this.http('bot_typing', at), 200, 'typing');
    this.expectStatus(await this.http('bot_typing', { ...at, ...json({ sender: 'operator' }) }), 200, 'operator typing');
    this.expectStatus(await this.http('bot_typing', at), 200, 'typing again');
  }

  async bot_mark_read(): Promise<void> {
    this.expectStatus(await this.http('bot_mark_read', { params: { chat_id: this.ctx.chat.id }, headers: this.botAuth }), 200, 'bot mark read');
  }

  async not_found(): Promise<void> {
    this.expectStatus(await this.http('not_found'), 404, 'unknown route');
  }

  // ---- Realtime ----

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

  async ws_connect(): Promise<void> {
    const conn = randomUUID();
    const ok = await this.ws('ws_connect', wsEvent('$connect', conn, { query: { token: this.ctx.user.realtimeToken } }));
    if (ok.statusCode !== 200) throw new Error(`$connect: ${ok.statusCode} ${ok.body ?? ''}`);
    if (!(await this.item(`CONN#${conn}`, 'CONN'))) throw new Error('$connect recorded nothing');
    const refused = await this.ws('ws_connect', wsEvent('$connect', randomUUID(), { query: {} }));
    if (refused.statusCode !== 401) throw new Error(`$connect without a token: ${refused.statusCode}`);
  }

  async ws_default(): Promise<void> {
    await this.socket(false); // subscribe in its own frame: the transaction that checks the connection
    await this.socket(true); // connect and subscribe in one frame: a plain put
    // Another user's channel: refused (103), after the transaction's check failed and a read told why.
    const conn = await this.socket(false);
    const other = `${this.ctx.user.channel.replace(/#.*/, '')}#${randomUUID()}`;
    const r = await this.ws('ws_default', wsEvent('$default', conn, { body: JSON.stringify({ id: 3, subscribe: { channel: other } }) }));
    if (!String(r.body).includes('"code":103')) throw new Error(`a foreign channel: ${r.body}`);
    const u = await this.ws('ws_default', wsEvent('$default', conn, { body: JSON.stringify({ id: 4, unsubscribe: { channel: this.ctx.user.channel } }) }));
    if (!String(u.body).includes('"unsubscribe"')) throw new Error(`unsubscribe: ${u.body}`);
    if (await this.item(`SUB#${this.ctx.user.channel}`, `CONN#${conn}`)) throw new Error('unsubscribe left the subscription');
  }

  async ws_disconnect(): Promise<void> {
    const conn = await this.socket(true);
    const r = await this.ws('ws_disconnect', wsEvent('$disconnect', conn));
    if (r.statusCode !== 200) throw new Error(`$disconnect: ${r.statusCode}`);
    if (await this.item(`CONN#${conn}`, 'CONN')) throw new Error('$disconnect left the connection');
    if (await this.item(`SUB#${this.ctx.user.channel}`, `CONN#${conn}`)) throw new Error('$disconnect left the subscription');
  }

  async publisher(): Promise<void> {
    await this.hx.readStream();
    const live = await this.socket(true);
    const gone = await this.socket(true);
    this.hx.rec.gone.add(gone);
    const event = this.hx.streamEvent(PUBLISHER, this.hx.records);
    if (!event.Records.some((r) => r.eventName === 'MODIFY')) throw new Error('no read action in the stream');
    const out = await this.hx.invoke<Any>(this.fn('publisher'), event);
    if (out.batchItemFailures.length) throw new Error(`publisher failed ${out.batchItemFailures.length} records`);
    const frames = (this.hx.rec.frames.get(live) ?? []).map((f) => JSON.parse(f));
    const photo = frames.find((f) => f.push?.pub?.data?.data?.id === this.ctx.photo.message.id);
    if (!photo) throw new Error(`the photo message was not published (${frames.length} frames)`);
    if (!frames.some((f) => f.push?.pub?.data?.type === 'action')) throw new Error('the read action was not published');
    await this.download(photo.push.pub.data.data.files[0].url, this.ctx.photo.bytes, 'published file url');
    // The gone socket: its connection and subscription removed.
    if (await this.item(`CONN#${gone}`, 'CONN')) throw new Error('a gone connection was kept');
    if (await this.item(`SUB#${this.ctx.user.channel}`, `CONN#${gone}`)) throw new Error('a gone subscription was kept');
  }

  async webhook_dispatcher(): Promise<void> {
    // A direct upload whose bytes landed but never completed, its record then removed (as TTL does). Made
    // directly (the upload route's per-user rate would refuse the flow's repeats).
    const id = randomUUID();
    const stale = { id, key: `bots/${this.ctx.botA.id}/users/${this.ctx.user.userId}/files/${id}` };
    await this.withAdminS3((s3) => s3.send(new PutObjectCommand({ Bucket: this.hx.stack.bucket, Key: stale.key, Body: PNG, ContentType: 'image/png' })));
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...keys.file(stale.id), entity: 'file', id: stale.id, s3_key: stale.key, status: 'pending' } }));
    await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: keys.file(stale.id) }));
    // Bot A's retention changed (as the bot CLI's update does): its retention task is started.
    const days = 1 + Math.floor(Math.random() * 3650);
    await this.admin.send(
      new UpdateCommand({
        TableName: this.hx.stack.tableName,
        Key: keys.bot(this.ctx.botA.id),
        UpdateExpression: 'SET retention_days = :days, retention_set_at = :at, updated_at = :at',
        ExpressionAttributeValues: { ':days': days, ':at': new Date().toISOString() },
      }),
    );
    await this.hx.readStream();
    const event = this.hx.streamEvent(WEBHOOK_DISPATCHER, this.hx.records);
    const inserts = event.Records.filter((r) => r.eventName === 'INSERT');
    const messages = inserts.filter((r) => r.dynamodb?.NewImage?.sender_type?.S === 'incoming').length;
    if (!messages) throw new Error('no user message for the dispatcher');
    if (messages === inserts.length) throw new Error('no bot reply (with reminders on) for the dispatcher');
    if (!event.Records.some((r) => r.eventName === 'REMOVE')) throw new Error('no removed file for the dispatcher');
    const out = await this.hx.invoke<Any>(this.fn('webhook_dispatcher'), event);
    // Taken off the queue first, even from a failed batch: a job left there would reach the deliverer's flow.
    const jobs = await this.receive('webhooks');
    if (out.batchItemFailures.length) throw new Error('the dispatcher failed the batch');
    const reminders = jobs.filter((j) => JSON.parse(j.Body).kind === 'reminder');
    if (jobs.length - reminders.length < messages) throw new Error(`${jobs.length - reminders.length} jobs queued for ${messages} messages`);
    if (reminders.length !== 1) throw new Error(`${reminders.length} reminders queued for the replies' burst`);
    this.ctx.jobs = jobs;
    await this.expectNoObject(stale.key, "a removed file's object was kept");
    const tasks = await Promise.all((await this.receive('tasks')).map((j) => this.item(keys.task(JSON.parse(j.Body).task_id).pk, 'TASK')));
    if (!tasks.some((t) => t?.kind === 'retention' && t.bot_id === this.ctx.botA.id && t.retention_days === days)) throw new Error('no retention task queued');
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

  async webhook_deliverer(): Promise<void> {
    const arn = this.queueArn('WebhookQueue');
    // The photo message's job: its event carries presigned file URLs.
    const job = (this.ctx.jobs as Any[]).find((j) => JSON.parse(j.Body).message?.id === this.ctx.photo.message.id);
    if (!job) throw new Error('no webhook job for the photo message');
    // Delivered: the receiver gets the signed event.
    const hooks = this.hx.webhooks;
    hooks.status = 200;
    const before = hooks.received.length;
    let out = await this.hx.invoke<Any>(this.fn('webhook_deliverer'), sqsEvent(arn, [job]));
    if (out.batchItemFailures.length) throw new Error('the deliverer failed a job');
    const got = hooks.received.slice(before);
    if (got.length !== 1 || !got[0].headers['x-webhook-signature']) throw new Error(`the receiver got ${got.length} deliveries`);
    const files = JSON.stringify(JSON.parse(got[0].body)).match(/"url":"([^"]+)"/);
    if (!files) throw new Error(`no file URL in the webhook event: ${got[0].body.slice(0, 300)}`);
    await this.download(files[1], this.ctx.photo.bytes, 'webhook file url');
    // The replies' reminder, due: claimed, the chat's unread replies read, the signed event delivered.
    const reminder = (this.ctx.jobs as Any[]).find((j) => JSON.parse(j.Body).kind === 'reminder');
    // Due and not fired yet, as the dispatcher left it (each run of this flow fires it afresh).
    const due = JSON.parse(reminder.Body);
    const marker = { ...keys.reminder(due.chat_id), entity: 'reminder', burst: due.burst, burst_at: due.burst_at, user_id: due.user_id, bot_id: due.bot_id };
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: marker }));
    const sentBefore = hooks.received.length;
    out = await this.hx.invoke<Any>(this.fn('webhook_deliverer'), sqsEvent(arn, [reminder]));
    if (out.batchItemFailures.length) throw new Error('the deliverer failed the reminder');
    const reminded = hooks.received.slice(sentBefore);
    if (reminded.length !== 1 || !String(reminded[0].headers['x-webhook-id']).startsWith('reminder:')) throw new Error(`the receiver got ${reminded.length} reminders`);
    // The receiver failing: queued again for the retry, then (the last retry failing) dead-lettered.
    hooks.status = 500;
    try {
      out = await this.hx.invoke<Any>(this.fn('webhook_deliverer'), sqsEvent(arn, [job]));
      if (out.batchItemFailures.length) throw new Error('the deliverer failed a job it should requeue');
      const retries = await this.receive('webhooks');
      if (retries.length !== 1 || JSON.parse(retries[0].Body).attempt !== 1) throw new Error(`${retries.length} retries queued`);
      out = await this.hx.invoke<Any>(this.fn('webhook_deliverer'), sqsEvent(arn, retries));
      if (out.batchItemFailures.length) throw new Error('the deliverer failed the last retry');
      const dead = await this.receive('webhooks_dlq');
      if (dead.length !== 1) throw new Error(`${dead.length} jobs dead-lettered`);
    } finally {
      hooks.status = 200;
    }
  }
}

/** The core functions' flows, in an order where each finds what it needs (user-flows.ts adds the rest). */
export const CORE_FLOW_ORDER = [
  'create_session',
  'create_chat',
  'list_chats',
  'upload_file',
  'create_upload',
  'upload_completer',
  'get_file',
  'create_message',
  'list_messages',
  'mark_read',
  'bot_list_chats',
  'bot_upload_file',
  'bot_create_upload',
  'bot_create_message',
  'bot_list_messages',
  'bot_edit_message',
  'bot_typing',
  'bot_mark_read',
  'not_found',
  'ws_connect',
  'ws_default',
  'ws_disconnect',
  'publisher',
  'webhook_dispatcher',
  'webhook_deliverer',
] as const;
