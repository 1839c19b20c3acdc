// A bot's retention through the running local stack, where a day of retention_days lasts a second
// (RETENTION_DAY_SECONDS=1, test/support/global-setup.ts) and expired items are swept every 2 s: messages and
// files older than the setting disappear from every read at once, then from the table (TTL) and the bucket
// (the removed file record's object deleted); the unread counters count only what is kept; a change of the
// setting re-dates what is stored (the retention task); newer messages and another bot's stay.
import { call, newBot, newSession, UUID } from '../support/api';
import { liveClient, until } from '../support/realtime';
import { untilTime } from '../support/wait';
import { startReceiver, type Hit } from '../support/receiver';
import { checkSchema } from '../support/openapi';
import { listBucket, scanTable } from '../support/storage';
import { readBot } from '../../lambdas/entities/bots';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { listChats } from '../../lambdas/flows/chats';
import { listMessages } from '../../lambdas/flows/history';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { chatFromItem } from '../../lambdas/entities/chats';
import { retainedUnread, retentionWindow } from '../../lambdas/policies/retention';
import { retentionTaskId } from '../../lambdas/flows/retention-task';
import { getUserFile } from '../../lambdas/flows/uploads';
import { InvalidInputError } from '../../lambdas/shared/errors';
import { realtimeOf, type Schemas } from '../support/contract';

/** A webhook delivery as the message.created event it is, or undefined for the other event (a reminder). */
function created(hit: Hit): Schemas['WebhookMessageCreated'] | undefined {
  return hit.body.event === 'message.created' ? hit.body : undefined;
}

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const asBot = (secretKey: string) => ({ headers: { authorization: `Bearer ${secretKey}` } });
const closers: (() => void)[] = [];
afterAll(() => closers.forEach((c) => c()));

function fileForm(name: string, extra = ''): FormData {
  const fd = new FormData();
  fd.append('file', new Blob([Buffer.concat([PNG, Buffer.from(extra)])], { type: 'image/png' }), name);
  return fd;
}

/** A user with one chat of the bot: a text and a photo from the user, two replies; returns every id they made. */
async function conversation(clientKey: string, secretKey: string, externalId: string) {
  const s = await newSession(clientKey, { external_id: externalId });
  const token = s.session_token;
  const chatId = (await call('POST', '/api/client/chats', { token, json: { name: 'kept?' } })).body.id;
  const fileId = (await call('POST', '/api/client/files', { token, body: fileForm('a.png', externalId) })).body.id;
  const messageIds: string[] = [];
  messageIds.push((await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'hello' } })).body.id);
  messageIds.push((await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: '', content_type: 'photo', files: [fileId] } })).body.id);
  for (const content of ['one', 'two']) messageIds.push((await call('POST', `/api/bot/chats/${chatId}/messages`, { ...asBot(secretKey), json: { content } })).body.id);
  return { token, userId: s.user.id, chatId, fileId, messageIds, realtime: realtimeOf(s) };
}

const unread = async (token: string) => ((await call('GET', '/api/client/chats', { token })).body as { unread_msg_by_user: number }[])[0].unread_msg_by_user;
const botUnread = async (secretKey: string) => (await call('GET', '/api/bot/chats', asBot(secretKey))).body.chats[0] as { unread_msg_by_user: number; unread_count: number };

test('messages and files past the retention are gone from every read at once, then from the table and the bucket; counters count what is kept', async () => {
  // 10 "days": 10 s; the bot's webhook receives the user's messages.
  const hook = await startReceiver(200);
  closers.push(() => hook.close());
  // Another bot's conversation first (kept for ever), so the ten seconds are this one's.
  const other = await newBot();
  const kept = await conversation(other.bot.client_key, other.secretKey, 'forever');
  const { bot, secretKey } = await newBot({ retention_days: 10, webhook_url: hook.url });
  const c = await conversation(bot.client_key, secretKey, 'short-lived');
  // Items naming a message or the file (the chat, its pointer and its markers stay: only messages and files expire).
  const mine = (text: string) => [c.fileId, ...c.messageIds].some((id) => text.includes(id));
  expect((await call('GET', `/api/client/chats/${c.chatId}/messages`, { token: c.token })).body).toHaveLength(4);
  expect((await call('GET', `/api/client/files/${c.fileId}`, { token: c.token })).status).toBe(200);
  // Both sides' counters once the stream has counted every message.
  await until(async () => (await unread(c.token)) === 2 && (await botUnread(secretKey)).unread_count === 2, 5000, 'the counters');

  // Reads decide by the time, not by what TTL has deleted yet: read as of 11 s after now, while every item is
  // still in the table, nothing of the chat is returned and no counter counts it.
  const later = retentionWindow(bot, Date.now() + 11_000);
  expect(await listMessages(c.userId, c.chatId, { limit: 100 }, later)).toEqual([]);
  expect(await listMessages(c.userId, c.chatId, { limit: 100, after: c.messageIds[0] }, later)).toEqual([]);
  expect(await getUserFile(c.userId, c.fileId, later)).toBeUndefined();
  expect((await listChats(c.userId, later))[0]).toMatchObject({ id: c.chatId, unread_msg_by_user: 0 });
  expect((await scanTable()).filter(mine).length).toBeGreaterThanOrEqual(5);

  // Past the retention: history empty, the file gone, counters 0 on both APIs, then nothing left in storage.
  await until(async () => ((await call('GET', `/api/client/chats/${c.chatId}/messages`, { token: c.token })).body as unknown[]).length === 0, 15_000, 'the expiry');
  expect((await call('GET', `/api/client/files/${c.fileId}`, { token: c.token })).status).toBe(404);
  expect(await unread(c.token)).toBe(0);
  expect(await botUnread(secretKey)).toMatchObject({ unread_msg_by_user: 0, unread_count: 0 });
  expect((await call('GET', `/api/bot/chats/${c.chatId}/messages`, asBot(secretKey))).body).toEqual([]);
  const edit = await call('PATCH', `/api/bot/chats/${c.chatId}/messages/${c.messageIds[2]}`, { ...asBot(secretKey), json: { content: 'too late' } });
  expect([edit.status, edit.body]).toEqual([404, { error: 'Message not found' }]);
  const resend = await call('POST', `/api/client/chats/${c.chatId}/messages`, { token: c.token, json: { content: '', content_type: 'photo', files: [c.fileId] } });
  expect(resend.status).toBe(400);
  await until(async () => (await scanTable()).filter(mine).length === 0, 10_000, 'TTL to delete the items');
  // The removed file record's object, deleted from the stream (the webhook dispatcher).
  await until(async () => (await listBucket()).every((k) => !k.includes(c.fileId)), 5000, 'the object deleted');
  // The chat stays (only messages and files expire) and takes new messages, counted from what is kept: the
  // webhook's chat counts no expired reply either.
  const later2 = (await call('POST', `/api/client/chats/${c.chatId}/messages`, { token: c.token, json: { content: 'still there?' } })).body.id;
  await until(() => hook.hits.some((h) => created(h)?.message.id === later2), 5000, 'the webhook');
  expect(hook.hits.map(created).find((e) => e?.message.id === later2)?.chat).toMatchObject({ id: c.chatId, unread_msg_by_user: 0 });
  await call('POST', `/api/bot/chats/${c.chatId}/messages`, { ...asBot(secretKey), json: { content: 'three' } });
  await until(async () => (await unread(c.token)) === 1, 5000, 'the new reply counted');
  // Another bot's conversation, kept for ever, is untouched.
  expect((await call('GET', `/api/client/chats/${kept.chatId}/messages`, { token: kept.token })).body).toHaveLength(4);
  expect(await unread(kept.token)).toBe(2);
  expect((await listBucket()).filter((k) => k.includes(kept.fileId))).toHaveLength(1);
}, 60_000);

test('a change of the setting re-dates what is stored: turned on, older messages and files go; turned off, the rest is kept', async () => {
  const { bot, secretKey } = await newBot();
  const old = await conversation(bot.client_key, secretKey, 'before');
  await untilTime(Date.now() + 2500, 'the conversation to be older than 2 "days" (2 s)');
  // On at 2 "days" (2 s): what was sent before is past it at once, and the task dates it for TTL.
  const { bot: on } = await updateBot(bot.id, { retention_days: 2 });
  expect((await call('GET', `/api/client/chats/${old.chatId}/messages`, { token: old.token })).body).toEqual([]);
  const taskId = retentionTaskId(bot.id, on.updated_at);
  let task = undefined as Schemas['Task'] | undefined;
  await until(async () => (task = (await call('GET', `/api/bot/tasks/${taskId}`, asBot(secretKey))).body).status === 'completed', 20_000, 'the retention task');
  expect(task).toEqual({ task_id: taskId, kind: 'retention', status: 'completed', created_at: expect.any(String), completed_at: expect.any(String) });
  expect(checkSchema('Task', task)).toEqual([]);
  const ids = [old.fileId, ...old.messageIds];
  await until(async () => (await scanTable()).every((i) => !ids.some((id) => i.includes(id))), 10_000, 'TTL to delete them');
  await until(async () => (await listBucket()).every((k) => !k.includes(old.fileId)), 5000, 'the object deleted');

  // Longer, then off: what was dated is kept again for ever (its ttl removed).
  const { bot: longer } = await updateBot(bot.id, { retention_days: 3650 });
  const now = await conversation(bot.client_key, secretKey, 'after');
  await until(async () => (await call('GET', `/api/bot/tasks/${retentionTaskId(bot.id, longer.updated_at)}`, asBot(secretKey))).body.status === 'completed', 20_000, 'the task');
  const dated = (await scanTable()).filter((i) => now.messageIds.some((id) => i.includes(`"id":"${id}"`)));
  expect(dated.map((i) => typeof (JSON.parse(i) as { ttl?: unknown }).ttl)).toEqual(['number', 'number', 'number', 'number']);
  // An edited reply and an uploaded file are re-dated too, but not published again: once the edit's own
  // publication is in, the socket hears nothing more until the reply sent after the tasks.
  const live = await liveClient(now.realtime);
  await call('PATCH', `/api/bot/chats/${now.chatId}/messages/${now.messageIds[3]}`, { ...asBot(secretKey), json: { content: 'two, edited' } });
  await live.waitFor((p) => p.type === 'message' && p.data.id === now.messageIds[3] && p.data.is_edited);
  live.publications.length = 0;
  const { bot: off } = await updateBot(bot.id, { retention_days: null });
  await until(async () => (await call('GET', `/api/bot/tasks/${retentionTaskId(bot.id, off.updated_at)}`, asBot(secretKey))).body.status === 'completed', 20_000, 'the task');
  const items = (await scanTable()).map((i) => JSON.parse(i) as Record<string, unknown>).filter((i) => typeof i.id === 'string' && [now.fileId, ...now.messageIds].includes(i.id));
  expect(items).toHaveLength(5);
  expect(items.filter((i) => 'ttl' in i)).toEqual([]);
  expect((await call('GET', `/api/client/chats/${now.chatId}/messages`, { token: now.token })).body).toHaveLength(4);
  expect((await readBot(bot.id))?.retention_days).toBeUndefined();
  // The same value set again (how a failed task is done over): a new task walks everything again.
  const { bot: again } = await updateBot(bot.id, { retention_days: null });
  expect(retentionTaskId(bot.id, again.updated_at)).not.toBe(retentionTaskId(bot.id, off.updated_at));
  await until(async () => (await call('GET', `/api/bot/tasks/${retentionTaskId(bot.id, again.updated_at)}`, asBot(secretKey))).body.status === 'completed', 20_000, 'the task again');
  const last = (await call('POST', `/api/bot/chats/${now.chatId}/messages`, { ...asBot(secretKey), json: { content: 'after the tasks' } })).body.id;
  await live.waitFor((p) => p.type === 'message' && p.data.id === last);
  live.close();
  expect(live.publications.map((p) => [p.type, p.data.id])).toEqual([['message', last]]);
}, 60_000);

test('the setting takes 1 to 3650 whole days, or off; anything else is refused and changes nothing', async () => {
  const { bot } = await newBot({ retention_days: 30 });
  for (const bad of [0, 3651, 1.5, -1]) {
    await expect(updateBot(bot.id, { retention_days: bad })).rejects.toThrow(InvalidInputError);
  }
  expect((await readBot(bot.id))?.retention_days).toBe(30);
  expect(bot.updated_at).toBe((await readBot(bot.id))?.updated_at);
  expect(retentionTaskId(bot.id, bot.updated_at)).toMatch(UUID);
});

test('a side that has not read for longer than the retention is recounted once, not on every list: the recount holds until a new message is counted or the window passes the oldest message it kept', async () => {
  // 60 "days": 60 s, and every read below is as of a computed time, so nothing expires for real meanwhile.
  // Three replies 1.5 s apart, never read by the user, and one in another chat.
  const DAYS = 60;
  const WINDOW = DAYS * 1000;
  const { bot, secretKey } = await newBot({ retention_days: DAYS });
  // The setting's own task done first: run late, it would re-date the ttl this test writes below.
  await until(async () => (await call('GET', `/api/bot/tasks/${retentionTaskId(bot.id, bot.updated_at)}`, asBot(secretKey))).body.status === 'completed', 20_000, 'the task');
  const s = await newSession(bot.client_key, { external_id: 'recounted' });
  const newChat = async () => (await call('POST', '/api/client/chats', { token: s.session_token, json: { name: 'recount' } })).body.id;
  const [chatId, other] = [await newChat(), await newChat()];
  const reply = async (content: string, to = chatId) => (await call('POST', `/api/bot/chats/${to}/messages`, { ...asBot(secretKey), json: { content } })).body as { id: string; created_at: string };
  const t1 = Date.parse((await reply('first')).created_at);
  await untilTime(t1 + 1500, 'the second reply 1.5 s after the first');
  const t2 = Date.parse((await reply('second')).created_at);
  const otherReply = await reply('second, in another chat', other);
  const chatItem = async (count: number, id = chatId) => {
    let item: Record<string, unknown> | undefined;
    await until(async () => (item = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(s.user.id, id) }))).Item)?.unread_msg_by_user === count, 10_000, `${count} replies counted`);
    return item!;
  };
  const chat = await chatItem(2);
  const otherChat = await chatItem(1, other);
  const send = jest.spyOn(dynamo, 'send');
  const queries = () => send.mock.calls.filter(([command]) => command instanceof QueryCommand).length;
  const asOf = (item: Record<string, unknown>, ms: number) => retainedUnread(chatFromItem(item), 'user', retentionWindow({ retention_days: DAYS }, ms));
  try {
    // Past the first reply's retention, within the second's: one Query finds one kept.
    expect(await asOf(chat, t1 + WINDOW + 100)).toBe(1);
    expect(queries()).toBe(1);
    // Asked again, and until the window passes the second reply: no Query.
    expect([await asOf(chat, t1 + WINDOW + 200), await asOf(chat, t2 + WINDOW - 100)]).toEqual([1, 1]);
    expect(queries()).toBe(1);
    // A newer reply counted by the stream (the stored count moves): counted again, once.
    await untilTime(t2 + 1500, 'the third reply 1.5 s after the second');
    const t3 = Date.parse((await reply('third')).created_at);
    const now = await chatItem(3);
    expect([await asOf(now, t2 + WINDOW - 100), await asOf(now, t2 + WINDOW - 100)]).toEqual([2, 2]);
    expect(queries()).toBe(2);
    // Past the second's retention: counted again (the third only), and that holds in turn.
    expect([await asOf(now, t2 + WINDOW + 100), await asOf(now, t2 + WINDOW + 200)]).toEqual([1, 1]);
    expect(queries()).toBe(3);
    // Past every reply: none kept, and that holds until a new message is counted.
    expect([await asOf(now, t3 + WINDOW + 100), await asOf(now, t3 + 10 * WINDOW)]).toEqual([0, 0]);
    expect(queries()).toBe(4);
    // A reply of the window already past its ttl at the time read (as a lengthened retention leaves it until
    // its task re-dates it; here a ttl 30 s ahead, read as of later): not counted, and no recount kept while
    // the task may bring it back. Read as of a time when the other chat's creation is out of the window.
    const ttl = Math.floor(Date.now() / 1000) + 30;
    await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.message(s.user.id, other, otherReply.id), UpdateExpression: 'SET #ttl = :ttl', ExpressionAttributeNames: { '#ttl': 'ttl' }, ExpressionAttributeValues: { ':ttl': ttl } }));
    const at = Date.parse(otherReply.created_at) + WINDOW - 500;
    expect(at).toBeGreaterThanOrEqual(ttl * 1000);
    expect([await asOf(otherChat, at), await asOf(otherChat, at)]).toEqual([0, 0]);
    expect(queries()).toBe(6);
  } finally {
    send.mockRestore();
  }
}, 60_000);
