// A visitor's data on request, through the running local stack: the Bot API finds a user (by external id, by
// id) and erases one. At once the user's tokens get 401, its socket closes and no session starts; then the task
// worker deletes the rest, and a scan of the whole table and a listing of the whole bucket find nothing that
// names the user, its chats or its files, while another user of the same bot is untouched.
import { call, newBot, newSession, UUID } from '../support/api';
import { startReceiver } from '../support/receiver';
import { liveClient, until } from '../support/realtime';
import { checkSchema } from '../support/openapi';
import { listBucket, scanTable } from '../support/storage';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { createUpload } from '../../lambdas/flows/uploads';
import { eraseUser } from '../../lambdas/flows/erase';
import { readTask } from '../../lambdas/entities/tasks';
import { queryAll } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { present, realtimeOf, type Schemas } from '../support/contract';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

const closers: (() => void)[] = [];
afterAll(() => closers.forEach((c) => c()));

/** A webhook receiver that answers 500: the bot's jobs stay queued and retried (pending webhook work). */
async function failingReceiver() {
  const r = await startReceiver(500);
  closers.push(() => r.close());
  return r;
}

const bot = (secretKey: string) => ({ headers: { authorization: `Bearer ${secretKey}` } });

async function waitForTask(secretKey: string, taskId: string, status = 'completed'): Promise<Schemas['Task']> {
  let task = undefined as Schemas['Task'] | undefined;
  await until(async () => (task = (await call('GET', `/api/bot/tasks/${taskId}`, bot(secretKey))).body).status === status, 20_000, `task ${status}`);
  return present(task, `task ${taskId}`);
}

function fileForm(name: string): FormData {
  const fd = new FormData();
  fd.append('file', new Blob([PNG], { type: 'image/png' }), name);
  return fd;
}

describe('finding a user', () => {
  test('by external_id and by id → 200 the User; unknown → 404; another bot\'s user → 404; bad input → 400', async () => {
    const { bot: b, secretKey } = await newBot();
    const other = await newBot();
    const s = await newSession(b.client_key, { external_id: 'crm-42', first_name: 'Ada' });
    const found = await call('GET', '/api/bot/users?external_id=crm-42', bot(secretKey));
    expect(found.status).toBe(200);
    expect(found.body).toEqual({ id: s.user.id, external_id: 'crm-42', bot_id: b.id, first_name: 'Ada', last_name: '', image_url: null, status: 'active' });
    expect(checkSchema('User', found.body)).toEqual([]);
    const byId = await call('GET', `/api/bot/users/${s.user.id}`, bot(secretKey));
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(found.body);

    expect((await call('GET', '/api/bot/users?external_id=nobody', bot(secretKey))).status).toBe(404);
    expect((await call('GET', '/api/bot/users/00000000-0000-4000-8000-000000000000', bot(secretKey))).status).toBe(404);
    // Another bot's user does not exist for this bot.
    for (const path of ['/api/bot/users?external_id=crm-42', `/api/bot/users/${s.user.id}`]) {
      const res = await call('GET', path, bot(other.secretKey));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'User not found' });
    }
    for (const path of ['/api/bot/users', '/api/bot/users?external_id=', '/api/bot/users/not-a-uuid', '/api/bot/tasks/not-a-uuid']) {
      const res = await call<Schemas['Error']>('GET', path, bot(secretKey));
      expect([path, res.status, typeof res.body.error]).toEqual([path, 400, 'string']);
    }
    expect((await call('GET', '/api/bot/users?external_id=crm-42')).status).toBe(401);
    expect((await call('DELETE', `/api/bot/users/${s.user.id}`, { headers: { authorization: 'Bearer sk_nope' } })).status).toBe(401);
  });
});

describe('erasing a user', () => {
  test('everything of the user goes from the table and the bucket; another user of the bot is untouched', async () => {
    const hook = await failingReceiver();
    const { bot: b, secretKey } = await newBot();
    await updateBot(b.id, { webhook_url: hook.url, unread_reminder_seconds: 900 });
    const s = await newSession(b.client_key, { external_id: 'erase-me' });
    const token = s.session_token;
    const userId = s.user.id;
    const chatIds: string[] = [];
    for (const name of ['first', 'second']) chatIds.push((await call('POST', '/api/client/chats', { token, json: { name } })).body.id);
    // Files: the user's attached and not, the bot's attached, a direct upload never sent.
    const attached = (await call('POST', '/api/client/files', { token, body: fileForm('a.png') })).body.id;
    const loose = (await call('POST', '/api/client/files', { token, body: fileForm('b.png') })).body.id;
    const botForm = fileForm('c.png');
    botForm.append('chat_id', chatIds[1]);
    const botFile = (await call('POST', '/api/bot/files', { ...bot(secretKey), body: botForm })).body.id;
    const pending = (await createUpload(userId, b.id, { name: 'd.png', size: PNG.length, mime_type: 'image/png', type: 'photo' })).record.id;
    const fileIds = [attached, loose, botFile, pending];
    // Messages both ways, an idempotency key, an edit, typing, a read mark.
    await call('POST', `/api/client/chats/${chatIds[0]}/messages`, { token, json: { content: 'hello', client_message_id: 'k-1' } });
    await call('POST', `/api/client/chats/${chatIds[0]}/messages`, { token, json: { content: '', content_type: 'photo', files: [attached] } });
    const reply = await call('POST', `/api/bot/chats/${chatIds[0]}/messages`, { ...bot(secretKey), json: { content: 'hi there' } });
    await call('PATCH', `/api/bot/chats/${chatIds[0]}/messages/${reply.body.id}`, { ...bot(secretKey), json: { content: 'hi there, edited' } });
    await call('POST', `/api/bot/chats/${chatIds[1]}/typing`, bot(secretKey));
    await call('POST', `/api/bot/chats/${chatIds[1]}/messages`, { ...bot(secretKey), json: { content: 'a file', content_type: 'photo', files: [botFile] } });
    await call('POST', `/api/client/chats/${chatIds[1]}/read`, { token });
    // A later reply stays unread: its reminder is pending (900 s); the user's messages' webhooks keep failing.
    await call('POST', `/api/bot/chats/${chatIds[1]}/messages`, { ...bot(secretKey), json: { content: 'unread' } });
    // Another user of the same bot, with a chat and a message.
    const keep = await newSession(b.client_key, { external_id: 'keep-me' });
    const keptChat = (await call('POST', '/api/client/chats', { token: keep.session_token, json: { name: 'stay' } })).body.id;
    await call('POST', `/api/client/chats/${keptChat}/messages`, { token: keep.session_token, json: { content: 'still here' } });
    const live = await liveClient(realtimeOf(s));
    closers.push(() => live.close());
    let disconnected: { code: number; reason: string } | undefined;
    live.client.on('disconnected', (ctx) => (disconnected = ctx));
    const ids = [userId, ...chatIds, ...fileIds];
    const mentions = (text: string) => ids.some((id) => text.includes(id));
    await until(async () => (await scanTable()).some((i) => i.includes('"REMINDER"') && i.includes(chatIds[1])), 5000, 'the reminder');
    expect((await scanTable()).filter(mentions).length).toBeGreaterThan(20);
    expect((await listBucket()).filter(mentions)).toHaveLength(3);
    const keptBefore = (await scanTable()).filter((i) => i.includes(keep.user.id)).sort();

    const del = await call('DELETE', `/api/bot/users/${userId}`, bot(secretKey));
    expect(del.status).toBe(202);
    expect(del.body).toEqual({ task_id: expect.stringMatching(UUID), kind: 'erase', status: 'pending', created_at: expect.any(String) });
    expect(checkSchema('Task', del.body)).toEqual([]);
    // While the erasure runs (its job waits ERASE_DELAY_SECONDS, 3 s on the test stack; asked first, so within
    // it): no new session for the user, the bot still finds the user, marked so, and a repeated DELETE gives the
    // same task.
    const again = await call('POST', '/api/client/session', { json: { client_key: b.client_key, external_id: 'erase-me' } });
    expect(again.status).toBe(409);
    expect((await call('GET', `/api/bot/users/${userId}`, bot(secretKey))).body.status).toBe('erasing');
    expect((await call('DELETE', `/api/bot/users/${userId}`, bot(secretKey))).body.task_id).toBe(del.body.task_id);
    // At once: the user's token is refused everywhere, its socket closes, no new session starts.
    for (const [method, path, json] of [
      ['GET', '/api/client/chats'],
      ['POST', '/api/client/chats', { name: 'x' }],
      ['GET', `/api/client/chats/${chatIds[0]}/messages`],
      ['POST', `/api/client/chats/${chatIds[0]}/messages`, { content: 'after' }],
      ['POST', `/api/client/chats/${chatIds[0]}/read`],
      ['POST', '/api/client/files/uploads', { name: 'e.png', size: 10, mime_type: 'image/png' }],
      ['GET', `/api/client/files/${loose}`],
    ] as [string, string, object?][]) {
      const res = await call(method, path, { token, json });
      expect([method, path, res.status, res.body]).toEqual([method, path, 401, { error: expect.stringMatching(/erased/) }]);
    }
    expect((await call('POST', '/api/client/files', { token, body: fileForm('late.png') })).status).toBe(401);
    // Told not to reconnect (a terminal code), and the socket closed.
    await until(() => disconnected !== undefined, 5000, 'the socket to close');
    expect(disconnected).toEqual({ code: 3500, reason: 'user erased' });
    live.close();

    const done = await waitForTask(secretKey, del.body.task_id);
    expect(done).toEqual({ ...del.body, status: 'completed', completed_at: expect.any(String) });
    expect(checkSchema('Task', done)).toEqual([]);
    const left = (await scanTable()).filter(mentions);
    expect(left).toEqual([]);
    expect((await listBucket()).filter(mentions)).toEqual([]);
    expect((await scanTable()).filter((i) => i.includes(keep.user.id)).sort()).toEqual(keptBefore);
    expect((await call('GET', `/api/client/chats/${keptChat}/messages`, { token: keep.session_token })).body).toHaveLength(1);
    // Gone for the bot too; the pending webhook retries were dropped, not sent.
    expect((await call('GET', `/api/bot/users/${userId}`, bot(secretKey))).status).toBe(404);
    expect((await call('GET', '/api/bot/users?external_id=erase-me', bot(secretKey))).status).toBe(404);
    // The kept user's failing webhooks go on being retried; none of the erased user's is sent after.
    const sentAfter = hook.hits.filter((e) => e.at > Date.parse(present(done.completed_at, 'the completed task’s completed_at')) && mentions(e.raw));
    expect(hook.hits.some((e) => mentions(e.raw))).toBe(true);
    expect(sentAfter).toEqual([]);
    // The external id starts a new user with no chats.
    const fresh = await newSession(b.client_key, { external_id: 'erase-me' });
    expect(fresh.user.id).not.toBe(userId);
    expect((await call('GET', '/api/client/chats', { token: fresh.session_token })).body).toEqual([]);
    expect((await call('GET', '/api/client/chats', { token })).status).toBe(401);
  }, 60_000);

  test("another bot's user → 404 and nothing done; an unknown task → 404", async () => {
    const mine = await newBot();
    const theirs = await newBot();
    const s = await newSession(theirs.bot.client_key);
    const res = await call('DELETE', `/api/bot/users/${s.user.id}`, bot(mine.secretKey));
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'User not found' });
    expect((await call('GET', '/api/client/chats', { token: s.session_token })).status).toBe(200);
    expect((await call('GET', `/api/bot/users/${s.user.id}`, bot(theirs.secretKey))).body.status).toBe('active');
    // A task is its bot's only.
    const task = await call('DELETE', `/api/bot/users/${s.user.id}`, bot(theirs.secretKey));
    expect((await call('GET', `/api/bot/tasks/${task.body.task_id}`, bot(mine.secretKey))).status).toBe(404);
    expect((await call('GET', '/api/bot/tasks/00000000-0000-4000-8000-000000000000', bot(theirs.secretKey))).status).toBe(404);
    await waitForTask(theirs.secretKey, task.body.task_id);
  }, 30_000);

  test('sends racing the DELETE: each is a 201 or a 401, and nothing of the user is left', async () => {
    const { bot: b, secretKey } = await newBot();
    const s = await newSession(b.client_key);
    const chatId = (await call('POST', '/api/client/chats', { token: s.session_token, json: { name: 'race' } })).body.id;
    const sends = Array.from({ length: 12 }, (_, i) =>
      call('POST', `/api/client/chats/${chatId}/messages`, { token: s.session_token, json: { content: `m${i}` } }).then((r) => r.status),
    );
    const del = call('DELETE', `/api/bot/users/${s.user.id}`, bot(secretKey));
    const statuses = await Promise.all(sends);
    expect(statuses.every((st) => st === 201 || st === 401)).toBe(true);
    await waitForTask(secretKey, (await del).body.task_id);
    expect((await scanTable()).filter((i) => i.includes(s.user.id) || i.includes(chatId))).toEqual([]);
  }, 30_000);

  test('an erasure cut short (its invocation out of time) resumes where it stopped and ends in the same state', async () => {
    const { bot: b, secretKey } = await newBot();
    const s = await newSession(b.client_key);
    const chatId = (await call('POST', '/api/client/chats', { token: s.session_token, json: { name: 'long' } })).body.id;
    for (let i = 0; i < 30; i++) await call('POST', `/api/client/chats/${chatId}/messages`, { token: s.session_token, json: { content: `m${i}` } });
    const task = await readTaskAfterDelete(secretKey, s.user.id);
    // The worker's own step, run here first with almost no time left: it stops after the files and reports more to do.
    expect(await eraseUser(task, () => 1000)).toBe(false);
    // The user's partition read at once (a scan of the whole shared table could take longer than the second
    // after which the stack's own job starts deleting).
    const left = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.userPartition(s.user.id) }, ConsistentRead: true });
    expect(left.length).toBeGreaterThan(30);
    // The queued job (or a redelivery) finishes it; running the step again after completion changes nothing.
    await waitForTask(secretKey, task.task_id);
    expect((await scanTable()).filter((i) => i.includes(s.user.id) || i.includes(chatId))).toEqual([]);
    expect(await eraseUser(task, () => 60_000)).toBe(true);
    expect((await scanTable()).filter((i) => i.includes(s.user.id) || i.includes(chatId))).toEqual([]);
    expect((await readTask(task.task_id))?.status).toBe('completed');
  }, 30_000);
});

async function readTaskAfterDelete(secretKey: string, userId: string) {
  const del = await call('DELETE', `/api/bot/users/${userId}`, bot(secretKey));
  expect(del.status).toBe(202);
  const task = await readTask(del.body.task_id);
  if (!task) throw new Error('no task record');
  return task;
}
