// Unread reminders through the running local stack: replies of the bot side (Bot API) that the user leaves
// unread give the bot's webhook one signed chat.unread_reminder per burst, checked against docs/openapi.yaml;
// a read before it fires cancels it; a new reply after a read starts a new burst; a redelivered record or job
// gives no second one; with reminders off nothing is scheduled.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, newSession, userWithChat } from '../support/api';
import { ROOT } from '../support/local-process';
import { startReceiver, type Hit } from '../support/receiver';
import type { Schemas } from '../support/contract';
import type { DemoBot } from '../../lib/local/stack';
import { until } from '../support/realtime';
import { sleep, untilTime } from '../support/wait';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { fireReminder, scheduleReminder } from '../../lambdas/flows/reminders';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '../../lambdas/entities/keys';
import type { MessageItem } from '../../lambdas/entities/messages';
import { verifyWebhook } from '../../examples/echo-bot';
import { checkWebhook } from '../support/openapi';

const closers: (() => void)[] = [];
afterAll(() => closers.forEach((c) => c()));

type ReminderHit = Omit<Hit, 'body'> & { body: Schemas['WebhookUnreadReminder'] };
const isReminder = (hit: Hit): hit is ReminderHit => hit.body.event === 'chat.unread_reminder';

async function receiver() {
  const r = await startReceiver();
  closers.push(() => r.close());
  return { ...r, reminders: () => r.hits.filter(isReminder) };
}

/** A user, a chat and a bot whose webhook goes to a receiver of the test, with reminders after `seconds`. */
async function chatWithReminders(seconds: number | null = 1) {
  const hook = await receiver();
  const u = await userWithChat();
  const { bot } = await updateBot(u.bot.id, { webhook_url: hook.url, unread_reminder_seconds: seconds });
  const reply = async (content: string) => {
    const res = await call('POST', `/api/bot/chats/${u.chatId}/messages`, { headers: { authorization: `Bearer ${u.secretKey}` }, json: { content } });
    expect(res.status).toBe(201);
    return res.body;
  };
  const read = async () => expect((await call('POST', `/api/client/chats/${u.chatId}/read`, { token: u.token })).status).toBe(200);
  return { ...u, hook, reply, read, webhookSecret: bot.webhook_secret as string };
}

test('three replies left unread: one signed reminder with the three, oldest first; none more', async () => {
  // Due 3 s after the first: the three replies land well before it on a loaded machine.
  const c = await chatWithReminders(3);
  const sent = [await c.reply('one'), await c.reply('two'), await c.reply('three')];
  await until(() => c.hook.reminders().length >= 1, 10_000, 'the reminder');
  await sleep(2500); // none may follow, and nothing marks when one would have: a second would be due 3 s after the first
  const [hit, ...more] = c.hook.reminders();
  expect(more).toEqual([]);
  expect(hit.headers['x-webhook-id']).toBe(`reminder:${c.chatId}:${sent[0].id}`);
  expect(verifyWebhook(c.webhookSecret, hit.raw, hit.headers['x-webhook-timestamp'] as string, hit.headers['x-webhook-signature'] as string)).toBe(true);
  expect(checkWebhook('chat.unread_reminder', hit.headers, hit.body)).toEqual([]);
  expect(hit.body).toMatchObject({
    event: 'chat.unread_reminder',
    bot_id: c.bot.id,
    chat: expect.objectContaining({ id: c.chatId }),
    user: { id: c.session.user.id, external_id: c.session.user.external_id, first_name: '', last_name: '' },
    unread_count: 3,
    first_unread_at: sent[0].created_at,
  });
  expect(hit.body.messages).toEqual(sent);
  // No message.created for the bot's own replies.
  expect(c.hook.hits.filter((h) => h.body.event === 'message.created')).toEqual([]);
});

test('a read before it fires cancels it; the next reply after the read starts a new burst with its own reminder', async () => {
  const c = await chatWithReminders(2);
  const asked = await c.reply('are you there?');
  await c.read();
  // Nothing marks a cancelled reminder's job: it runs at the due time and sends nothing. Wait past it.
  await untilTime(Date.parse(asked.created_at) + 3500, 'past the time the reminder was due (2 s)');
  expect(c.hook.reminders()).toEqual([]);
  const later = await c.reply('a new answer');
  await until(() => c.hook.reminders().length >= 1, 10_000, 'the new burst\'s reminder');
  expect(c.hook.reminders()).toHaveLength(1);
  expect(c.hook.reminders()[0].body).toMatchObject({ unread_count: 1, messages: [later] });
  expect(c.hook.reminders()[0].headers['x-webhook-id']).toBe(`reminder:${c.chatId}:${later.id}`);
});

test('a reply while a reminder is due does not postpone it; replies after it fired are a new burst', async () => {
  const c = await chatWithReminders(3);
  const first = await c.reply('first');
  await untilTime(Date.parse(first.created_at) + 1000, 'the second reply a second after the first');
  const second = await c.reply('second');
  await until(() => c.hook.reminders().length >= 1, 10_000, 'the reminder');
  // Due 3 s after the first reply, not after the second.
  expect(c.hook.reminders()[0].body.messages.map((m) => m.id)).toEqual([first.id, second.id]);
  const item = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item;
  expect(item).toMatchObject({ burst: first.id, due_at: new Date(Date.parse(first.created_at) + 3000).toISOString(), fired_at: expect.any(String) });
  const third = await c.reply('third, after the reminder');
  await until(() => c.hook.reminders().length >= 2, 10_000, 'the next burst\'s reminder');
  // It covers the replies since the last reminder: its own id, so a receiver deduping by it keeps both.
  expect(c.hook.reminders()[1].body).toMatchObject({ unread_count: 1, messages: [third] });
  expect(c.hook.reminders()[1].headers['x-webhook-id']).toBe(`reminder:${c.chatId}:${third.id}`);
});

test('exactly once: the reply\'s record and the due job delivered again give nothing more; a read racing the firing sends nothing', async () => {
  const c = await chatWithReminders(900); // far off: the test fires it itself
  const reply = await c.reply('hello?');
  const item = { ...(reply as object), user_id: c.session.user.id, bot_id: c.bot.id, chat_id: c.chatId, external_id: c.session.user.external_id } as MessageItem;
  // The stack's dispatcher has scheduled it; the same record again schedules the same burst (a duplicate job).
  await until(async () => Boolean((await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item), 10_000, 'the reminder to be scheduled');
  const again = await scheduleReminder(item, 900);
  expect(again?.job).toMatchObject({ kind: 'reminder', burst: reply.id, chat_id: c.chatId });
  const job = again!.job;
  const event = await fireReminder(job, 'queue-message-1');
  expect(event).toMatchObject({ unread_count: 1, messages: [reply] });
  // The duplicate job (another queue message) finds it taken; SQS redelivering the first may take it again.
  expect(await fireReminder(job, 'queue-message-2')).toBeUndefined();
  expect(await fireReminder(job, 'queue-message-1')).toMatchObject({ unread_count: 1 });
  // Once fired, the record delivered again schedules nothing.
  expect(await scheduleReminder(item, 900)).toBeUndefined();

  // A read racing the firing: a new burst, read just before it fires, sends nothing.
  const next = await c.reply('still there?');
  const nextItem = { ...item, ...(next as object) };
  await until(async () => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item?.burst === next.id, 10_000, 'the new burst');
  await c.read();
  const due = { ...job, burst: next.id, burst_at: nextItem.created_at };
  expect(await fireReminder(due, 'queue-message-3')).toBeUndefined();
});

test('a reply written before the reminder fired, whose record comes after: in that reminder, and no second one for it', async () => {
  const c = await chatWithReminders(900); // far off: the test fires it itself
  const [first, second] = [await c.reply('one'), await c.reply('two')];
  const item = (reply: object) => ({ ...reply, user_id: c.session.user.id, bot_id: c.bot.id, chat_id: c.chatId, external_id: c.session.user.external_id }) as MessageItem;
  await until(async () => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item?.burst === first.id, 10_000, 'the burst');
  const job = (await scheduleReminder(item(first), 900))!.job;
  expect(await fireReminder(job, 'queue-message-1')).toMatchObject({ unread_count: 2, messages: [first, second] });
  // The second reply's record reaching the dispatcher now (stream lag, a redelivery, a retried batch).
  expect(await scheduleReminder(item(second), 900)).toBeUndefined();
  // A reply written after the firing is the next burst's, and not in the first reminder when it is retried.
  const third = await c.reply('three');
  await until(async () => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item?.burst === third.id, 10_000, 'the next burst');
  const next = (await scheduleReminder(item(third), 900))!.job;
  expect(await fireReminder(next, 'queue-message-2')).toMatchObject({ unread_count: 1, messages: [third] });
  // A reply that took its time before that firing but was written after its read (a slow send): not carried,
  // so its record starts the next burst instead of being left out of every reminder.
  const slow = { ...item(third), id: String(BigInt(third.id) + 1n), created_at: new Date(Date.parse(third.created_at) + 1).toISOString() };
  expect(await scheduleReminder(slow, 900)).toMatchObject({ job: { burst: slow.id } });
  // A reminder fired without a record of what it carried (as before there was one): a reply written after it
  // starts the next burst.
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.reminder(c.chatId),
      UpdateExpression: 'SET fired_at = :at, fired_by = :by REMOVE included',
      ExpressionAttributeValues: { ':at': new Date(Date.now() - 1000).toISOString(), ':by': 'an older deliverer' },
    }),
  );
  const later = { ...item(third), id: String(BigInt(third.id) + 2n), created_at: new Date().toISOString() };
  expect(await scheduleReminder(later, 900)).toMatchObject({ job: { burst: later.id } });
});

test('reminders off (the default): a reply schedules nothing', async () => {
  const c = await chatWithReminders(null);
  await c.reply('no reminder for me');
  await sleep(1500); // nothing may be scheduled, and the dispatcher that would schedule it leaves no mark when it does not
  expect((await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item).toBeUndefined();
  expect(c.hook.hits).toEqual([]);
});

test('the setting refuses 0, 901 and a fraction', async () => {
  const c = await userWithChat();
  for (const bad of [0, 901, 1.5]) {
    await expect(updateBot(c.bot.id, { unread_reminder_seconds: bad })).rejects.toThrow(/unread_reminder_seconds must be a whole number of seconds from 1 to 900/);
  }
});

test('with npm start, the echo bot gets the demo bot\'s reminder for its reply left unread, and says what it would e-mail', async () => {
  const demo = JSON.parse(readFileSync(join(process.env.DATA_DIR as string, 'demo-bot.json'), 'utf8')) as DemoBot;
  await updateBot(demo.bot_id, { unread_reminder_seconds: 1 });
  try {
    const session = await newSession(demo.client_key, { external_id: `reminded-${Date.now()}`, first_name: 'Ada' });
    const chat = await call('POST', '/api/client/chats', { token: session.session_token, json: { name: 'echo' } });
    await call('POST', `/api/client/chats/${chat.body.id}/messages`, { token: session.session_token, json: { content: 'ping' } });
    const log = join(ROOT, 'test-output', 'local-stack.log');
    const line = new RegExp(`echo bot: would e-mail Ada: 1 unread reply in chat ${chat.body.id}, the first: "You[^"]*"`); // its edits may still be streaming
    await until(() => line.test(readFileSync(log, 'utf8')), 15_000, "the echo bot's reminder line");
  } finally {
    await updateBot(demo.bot_id, { unread_reminder_seconds: null });
  }
});

test('the echo bot turns a reminder into the line of an e-mail it would send', async () => {
  const { reminderLine } = await import('../../examples/echo-bot');
  const line = reminderLine({
    event: 'chat.unread_reminder',
    chat: { id: 'c1' },
    user: { id: 'u1', external_id: 'shop-42', first_name: 'Ada', last_name: '' },
    messages: [{ id: '1', content: 'Your order shipped' }],
    unread_count: 2,
  });
  expect(line).toBe('would e-mail Ada: 2 unread replies in chat c1, the first: "Your order shipped"');
});

test('a reminder that never fired (its job dropped: webhook or setting removed meanwhile) does not silence the chat an hour past its time', async () => {
  const c = await chatWithReminders(900);
  const marker = async () => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), ConsistentRead: true }))).Item;
  const first = await c.reply('first');
  await until(async () => (await marker())?.burst === first.id, 10_000, 'the first burst');
  const second = await c.reply('second, while it is due');
  await sleep(1000); // nothing may change, and the dispatcher leaves no mark when it changes nothing
  expect((await marker())?.burst).toBe(first.id); // not postponed, not replaced
  await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.reminder(c.chatId), UpdateExpression: 'SET due_at = :past', ExpressionAttributeValues: { ':past': new Date(Date.now() - 2 * 3600_000).toISOString() } }));
  const third = await c.reply('third, long after');
  await until(async () => (await marker())?.burst === third.id, 10_000, 'a new burst');
  expect(second.id < third.id).toBe(true);
});
