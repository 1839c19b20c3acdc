// The flows of the HTTP API's functions (client and Bot API routes, and the upload completer S3 invokes): each
// makes every AWS call its function makes, with the statuses a working function answers.
import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { json } from './events';
import { layoutMarker } from './template';
import { keys } from '../../lambdas/entities/keys';
import type { FileRecord } from '../../lambdas/entities/files';
import { FlowBase, type DirectUpload } from './flow-base';
import { firstFileUrl, present, type BotChatPage, type Chat, type FileInfo, type Message } from '../support/contract';

/** A user item as the layout before users had their own partition stored it: the first of test/fixtures/legacy-layout (the old code's write). */
const LEGACY_USER = (() => {
  const fixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'legacy-layout', 'table.json'), 'utf8')) as { items: Record<string, AttributeValue>[] };
  const user = fixture.items.map((i) => unmarshall(i)).find((i) => i.entity === 'user' && String(i.sk).startsWith(keys.legacyUserPrefix));
  if (!user) throw new Error('no legacy user item in test/fixtures/legacy-layout');
  return user;
})();

export class ApiFlows extends FlowBase {
  /** Bots made as the bot CLI does (lambdas/flows/bot-admin.ts with admin credentials): A with a webhook and unread reminders, B verifying identities. */
  async bots(): Promise<void> {
    const bots = this.hx.admin<typeof import('../../lambdas/flows/bot-admin')>('lambdas/flows/bot-admin');
    const a = await bots.createBot({ name: 'moto A' });
    await bots.updateBot(a.bot.id, { webhook_url: this.hx.webhooks.url, unread_reminder_seconds: 1 });
    const b = await bots.createBot({ name: 'moto B' });
    const updated = await bots.updateBot(b.bot.id, { identity_verification: true });
    this.ctx.botA = { ...a.bot, secretKey: a.secretKey };
    this.ctx.botB = { ...updated.bot };
  }

  async create_session(): Promise<void> {
    const ext = `moto-${randomUUID()}`;
    const first = await this.session(ext);
    const again = await this.session(ext);
    if (again.userId !== first.userId) throw new Error('a returning user got another id');
    if (!first.realtimeToken) throw new Error('no realtime block in the session');
    await this.session(undefined); // anonymous visitor
    const { client_key, identity_secret } = this.need('botB');
    const hash = createHmac('sha256', present(identity_secret, "bot B's identity secret")).update(ext).digest('hex');
    this.expectStatus(await this.http('create_session', json({ client_key, external_id: ext, external_id_hash: hash })), 200, 'verified session');
    this.expectStatus(await this.http('create_session', json({ client_key, external_id: ext, external_id_hash: '0'.repeat(64) })), 403, 'wrong hash');
    this.ctx.user ??= first;
    // While the data move runs, a returning user still at its legacy key: its session moves it (the new key put, the
    // legacy one deleted, in one transaction) and it keeps its id.
    await this.withoutLayoutMarker(async () => {
      const legacy = await this.legacyUser();
      const moved = await this.session(legacy.externalId);
      if (moved.userId !== legacy.id) throw new Error('a user at its legacy key got another id');
      await this.expectMoved(legacy, 'the session');
    });
  }

  /** Runs `during` on a table that looks not yet moved (no layout marker); then the marker is as a moved table has it. */
  protected async withoutLayoutMarker(during: () => Promise<void>): Promise<void> {
    const TableName = this.hx.stack.tableName;
    await this.admin.send(new DeleteCommand({ TableName, Key: keys.layout() }));
    try {
      await during();
    } finally {
      await this.admin.send(new PutCommand({ TableName, Item: layoutMarker() }));
    }
  }

  /** A user of bot A stored as the old code stored it: at its legacy key, with its reference by id. */
  protected async legacyUser(): Promise<{ id: string; externalId: string }> {
    const [id, externalId, botId] = [randomUUID(), `moto-legacy-${randomUUID()}`, this.need('botA').id];
    const TableName = this.hx.stack.tableName;
    await this.admin.send(new PutCommand({ TableName, Item: { ...LEGACY_USER, ...keys.legacyUser(botId, externalId), id, external_id: externalId, bot_id: botId } }));
    await this.admin.send(new PutCommand({ TableName, Item: { ...keys.userRef(id), entity: 'user_ref', user_id: id, bot_id: botId, external_id: externalId } }));
    return { id, externalId };
  }

  /** The user is at its new key, and nothing is left at its legacy key. */
  protected async expectMoved(user: { id: string; externalId: string }, by: string): Promise<void> {
    const botId = this.need('botA').id;
    const [legacy, moved] = [keys.legacyUser(botId, user.externalId), keys.user(botId, user.externalId)];
    if (await this.item(legacy.pk, legacy.sk)) throw new Error(`${by} left the user at its legacy key`);
    if ((await this.item(moved.pk, moved.sk))?.id !== user.id) throw new Error(`${by} did not put the user at its new key`);
  }

  async create_chat(): Promise<void> {
    const s = this.ctx.user && !this.ctx.chat ? this.ctx.user : await this.session(`moto-${randomUUID()}`, 'create_session');
    const chat = this.expectStatus<Chat>(await this.http('create_chat', { ...json({ name: 'moto chat' }), headers: this.auth(s.token) }), 201, 'create chat');
    this.ctx.chat ??= chat;
  }

  async list_chats(): Promise<void> {
    const chats = this.expectStatus<Chat[]>(await this.http('list_chats', { headers: this.auth(this.need('user').token) }), 200, 'list chats');
    if (!chats.some((c) => c.id === this.need('chat').id)) throw new Error('the chat is not listed');
  }

  async upload_file(): Promise<void> {
    const file = await this.upload('upload_file', this.auth(this.need('user').token));
    this.ctx.file ??= file;
  }

  async create_upload(): Promise<void> {
    await this.photoUpload();
  }

  async bot_create_upload(): Promise<void> {
    const pdf = Buffer.from(`%PDF-1.7\n${randomUUID()}`);
    await this.directUpload('bot_create_upload', this.botAuth, { chat_id: this.need('chat').id, name: 'r.pdf', size: pdf.length, mime_type: 'application/pdf' }, pdf, 'application/pdf');
  }

  /** S3's event for a POSTed object: the completer settles a photo uploaded, and an HTML page rejected and deleted. */
  async upload_completer(): Promise<void> {
    const complete = async (ticket: DirectUpload) => {
      const key = ticket.upload.fields.key;
      const event = { Records: [{ eventSource: 'aws:s3', eventName: 'ObjectCreated:Post', s3: { bucket: { name: this.hx.stack.bucket }, object: { key, size: ticket.bytes.length } } }] };
      await this.hx.invoke(this.fn('upload_completer'), event);
      return this.item<FileRecord>(`FILE#${ticket.file.id}`, 'FILE');
    };
    const photo = await this.photoUpload();
    const done = await complete(photo);
    if (done?.status !== 'uploaded') throw new Error(`the photo ended ${done?.status} ${done?.reason ?? ''}`);
    this.ctx.uploaded ??= photo;
    const page = Buffer.from('<!doctype html><script>alert(1)</script>');
    const html = await this.directUpload('create_upload', this.auth(this.need('user').token), { name: 'cat.png', size: page.length, mime_type: 'image/png' }, page, 'image/png');
    const rejected = await complete(html);
    if (rejected?.status !== 'rejected') throw new Error(`the HTML page ended ${rejected?.status}`);
    await this.expectNoObject(html.upload.fields.key, 'the rejected object was kept');
  }

  async get_file(): Promise<void> {
    const uploaded = this.need('uploaded');
    const file = this.expectStatus<FileInfo>(await this.http('get_file', { params: { file_id: uploaded.file.id }, headers: this.auth(this.need('user').token) }), 200, 'get file');
    if (file.status !== 'uploaded') throw new Error(`get file: ${file.status}`);
    await this.download(present(file.url, 'get file: its url'), uploaded.bytes, 'get_file url');
  }

  async create_message(): Promise<void> {
    const user = this.need('user');
    const path = { params: { chat_id: this.need('chat').id } };
    const headers = { ...this.auth(user.token), 'idempotency-key': randomUUID() };
    const first = this.expectStatus<Message>(await this.http('create_message', { ...path, ...json({ content: 'hello moto' }), headers }), 201, 'send');
    const replay = this.expectStatus<Message>(await this.http('create_message', { ...path, ...json({ content: 'hello moto' }), headers }), 200, 'send replayed');
    if (replay.id !== first.id) throw new Error('the replayed send returned another message');
    // A photo: a new upload (upload_file's own user), then a message that carries it.
    const file = this.fn('upload_file') === this.override ? this.need('file') : await this.upload('upload_file', this.auth(user.token));
    const photo = this.expectStatus<Message>(
      await this.http('create_message', { ...path, ...json({ content: '', content_type: 'photo', files: [file.id] }), headers: this.auth(user.token) }),
      201,
      'send with a file',
    );
    await this.download(firstFileUrl(photo), file.bytes, 'sent file url');
    // A keyed send refused by the rate limit gives its key back (a refused send leaves nothing): the user's
    // window of this minute made full, then emptied again (admin writes).
    const window = Math.floor(Date.now() / 60_000) * 60;
    const rateKey = keys.rateWindow('messages', user.userId, window);
    await this.admin.send(new PutCommand({ TableName: this.hx.stack.tableName, Item: { ...rateKey, entity: 'rate', n: 1_000_000, ttl: window + 120 } }));
    try {
      const over = { ...this.auth(user.token), 'idempotency-key': randomUUID() };
      this.expectStatus(await this.http('create_message', { ...path, ...json({ content: 'one too many' }), headers: over }), 429, 'send over the rate');
    } finally {
      await this.admin.send(new DeleteCommand({ TableName: this.hx.stack.tableName, Key: rateKey }));
    }
    if (!this.ctx.messages) {
      this.ctx.photo = { message: photo, bytes: file.bytes };
      for (let i = 0; i < 3; i++) {
        this.expectStatus(await this.http('create_message', { ...path, ...json({ content: `page ${i}` }), headers: this.auth(user.token) }), 201, 'send');
      }
      this.ctx.messages = true;
    }
  }

  async list_messages(): Promise<void> {
    await this.history('list_messages', this.auth(this.need('user').token));
  }

  async mark_read(): Promise<void> {
    const headers = this.auth(this.need('user').token);
    this.expectStatus(await this.http('mark_read', { params: { chat_id: this.need('chat').id }, headers }), 200, 'mark read');
    // No such chat: its pointer is read to tell 404 from another user's 403.
    this.expectStatus(await this.http('mark_read', { params: { chat_id: randomUUID() }, headers }), 404, 'mark read of no chat');
  }

  async bot_list_chats(): Promise<void> {
    const first = this.expectStatus<BotChatPage>(await this.http('bot_list_chats', { headers: this.botAuth, query: { limit: '1' } }), 200, 'bot chats');
    if (!Array.isArray(first.chats) || first.chats.length !== 1) throw new Error(`bot chats page: ${JSON.stringify(first).slice(0, 300)}`);
    if (first.next_cursor) {
      this.expectStatus(await this.http('bot_list_chats', { headers: this.botAuth, query: { limit: '1', cursor: first.next_cursor } }), 200, 'bot chats next page');
    }
    this.expectStatus(await this.http('bot_list_chats', { headers: this.botAuth }), 200, 'bot chats');
  }

  async bot_list_messages(): Promise<void> {
    await this.history('bot_list_messages', this.botAuth);
  }

  async bot_upload_file(): Promise<void> {
    const file = await this.upload('bot_upload_file', this.botAuth, { chat_id: this.need('chat').id });
    this.ctx.botFile ??= file;
  }

  async bot_create_message(): Promise<void> {
    const chatId = this.need('chat').id;
    const path = { params: { chat_id: chatId } };
    const file = this.fn('bot_upload_file') === this.override ? this.need('botFile') : await this.upload('bot_upload_file', this.botAuth, { chat_id: chatId });
    const headers = { ...this.botAuth, 'idempotency-key': randomUUID() };
    const body = json({ content: 'a reply', files: [file.id] });
    const first = this.expectStatus<Message>(await this.http('bot_create_message', { ...path, ...body, headers }), 201, 'bot reply');
    const replay = this.expectStatus<Message>(await this.http('bot_create_message', { ...path, ...body, headers }), 200, 'bot reply replayed');
    if (replay.id !== first.id) throw new Error('the replayed reply returned another message');
    await this.download(firstFileUrl(first), file.bytes, 'bot reply file url');
    this.expectStatus(await this.http('bot_create_message', { ...path, ...json({ content: 'operator here', sender: 'operator' }), headers: this.botAuth }), 201, 'operator reply');
  }

  /** The bot side edits its reply (a streamed answer): a newer version applies, an older one is a 409. */
  async bot_edit_message(): Promise<void> {
    const params = { chat_id: this.need('chat').id };
    const file = await this.upload('bot_upload_file', this.botAuth, params);
    const reply = this.expectStatus<Message>(await this.http('bot_create_message', { params, ...json({ content: 'draft', files: [file.id] }), headers: this.botAuth }), 201, 'bot reply');
    const at = { params: { ...params, message_id: reply.id }, headers: this.botAuth };
    const edited = this.expectStatus<Message>(await this.http('bot_edit_message', { ...at, ...json({ content: 'final', version: 2 }) }), 200, 'edit');
    if (edited.id !== reply.id || edited.content !== 'final' || !edited.is_edited) throw new Error(`edit: ${JSON.stringify(edited).slice(0, 300)}`);
    await this.download(firstFileUrl(edited), file.bytes, 'edited message file url');
    this.expectStatus(await this.http('bot_edit_message', { ...at, ...json({ content: 'stale', version: 1 }) }), 409, 'an older edit');
    const userMessage = this.expectStatus<Message>(
      await this.http('create_message', { params, ...json({ content: 'mine' }), headers: this.auth(this.need('user').token) }),
      201,
      'send',
    );
    this.expectStatus(await this.http('bot_edit_message', { params: { ...params, message_id: userMessage.id }, headers: this.botAuth, ...json({ content: 'x' }) }), 403, "editing the user's message");
  }

  /** The visitor answers a card's postback (the card's photo by file id): once; the same answer again writes nothing, another is a 409. */
  async answer_message(): Promise<void> {
    const params = { chat_id: this.need('chat').id };
    const file = await this.upload('bot_upload_file', this.botAuth, params);
    const actions = ['yes', 'no'].map((payload) => ({ type: 'postback', text: payload, payload }));
    const card = { content: 'Pick one', content_type: 'cards', content_attributes: { items: [{ title: 'A card', media_url: file.id, actions }] } };
    const asked = this.expectStatus<Message>(await this.http('bot_create_message', { params, ...json(card), headers: this.botAuth }), 201, 'a card');
    const at = { params: { ...params, message_id: asked.id }, headers: this.auth(this.need('user').token) };
    const answered = this.expectStatus<Message>(await this.http('answer_message', { ...at, ...json({ card: 0, payload: 'yes' }) }), 200, 'the answer');
    await this.download(firstFileUrl(answered), file.bytes, "the answered card's photo url");
    this.expectStatus(await this.http('answer_message', { ...at, ...json({ card: 0, payload: 'yes' }) }), 200, 'the same answer again');
    this.expectStatus(await this.http('answer_message', { ...at, ...json({ card: 0, payload: 'no' }) }), 409, 'another answer');
    this.expectStatus(await this.http('answer_message', { ...at, params: { ...params, message_id: '9'.repeat(19) }, ...json({ card: 0, payload: 'yes' }) }), 404, 'no such message');
  }

  /** The bot side typing: the bot, then an operator, then the bot again (coalesced). */
  async bot_typing(): Promise<void> {
    const at = { params: { chat_id: this.need('chat').id }, headers: this.botAuth };
    this.expectStatus(await this.http('bot_typing', at), 200, 'typing');
    this.expectStatus(await this.http('bot_typing', { ...at, ...json({ sender: 'operator' }) }), 200, 'operator typing');
    this.expectStatus(await this.http('bot_typing', at), 200, 'typing again');
  }

  async bot_mark_read(): Promise<void> {
    this.expectStatus(await this.http('bot_mark_read', { params: { chat_id: this.need('chat').id }, headers: this.botAuth }), 200, 'bot mark read');
  }

  async not_found(): Promise<void> {
    this.expectStatus(await this.http('not_found'), 404, 'unknown route');
  }
}
