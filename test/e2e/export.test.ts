// Exporting a user through the running local stack: the Bot API's export task writes one NDJSON file (the user,
// each chat and its messages in order, each file with a URL that serves its bytes), downloadable for a day from
// the task's presigned URL; once its item expires (TTL, swept locally) the object is deleted, and an erasure
// deletes an export too. Another bot's user is a 404, a user being erased a 409.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, newBot, newSession, UUID } from '../support/api';
import { until } from '../support/realtime';
import { checkSchema } from '../support/openapi';
import { listBucket, scanTable } from '../support/storage';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { botTask } from '../../lambdas/entities/tasks';
import { NotFoundError } from '../../lambdas/shared/errors';
import { present, type Chat, type FileInfo, type Message, type Schemas, type User } from '../support/contract';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const bot = (secretKey: string) => ({ headers: { authorization: `Bearer ${secretKey}` } });

async function completed(secretKey: string, taskId: string): Promise<Schemas['Task']> {
  let task = undefined as Schemas['Task'] | undefined;
  await until(async () => (task = (await call('GET', `/api/bot/tasks/${taskId}`, bot(secretKey))).body).status === 'completed', 20_000, 'the export');
  return present(task, `task ${taskId}`);
}

/** A line of an export's NDJSON file (lambdas/flows/export.ts): its type names the one field it carries. */
type ExportLine = { type: 'user' | 'chat' | 'message' | 'file'; user?: User; chat?: Chat; message?: Message; file?: FileInfo };

function fileForm(name: string, bytes = PNG): FormData {
  const fd = new FormData();
  fd.append('file', new Blob([bytes], { type: 'image/png' }), name);
  return fd;
}

test("an export holds the user, each chat with its messages in order, and each file with a working URL; it expires after a day", async () => {
  const { bot: b, secretKey } = await newBot();
  const s = await newSession(b.client_key, { external_id: 'export-me', first_name: 'Ada' });
  const token = s.session_token;
  const first = (await call('POST', '/api/client/chats', { token, json: { name: 'first' } })).body.id;
  const second = (await call('POST', '/api/client/chats', { token, json: { name: 'second' } })).body.id;
  const attached = await call('POST', '/api/client/files', { token, body: fileForm('a.png') });
  const loose = await call('POST', '/api/client/files', { token, body: fileForm('b.png', Buffer.concat([PNG, Buffer.from('loose')])) });
  const sent: string[] = [];
  sent.push((await call('POST', `/api/client/chats/${first}/messages`, { token, json: { content: 'hello' } })).body.id);
  sent.push((await call('POST', `/api/bot/chats/${first}/messages`, { ...bot(secretKey), json: { content: 'hi Ada' } })).body.id);
  sent.push((await call('POST', `/api/client/chats/${first}/messages`, { token, json: { content: '', content_type: 'photo', files: [attached.body.id] } })).body.id);
  const inSecond = (await call('POST', `/api/client/chats/${second}/messages`, { token, json: { content: 'again' } })).body.id;
  const other = await newSession(b.client_key, { external_id: 'someone-else' });
  await call('POST', '/api/client/chats', { token: other.session_token, json: { name: 'not in the export' } });

  const started = await call('POST', `/api/bot/users/${s.user.id}/export`, bot(secretKey));
  expect(started.status).toBe(202);
  expect(started.body).toEqual({ task_id: expect.stringMatching(UUID), kind: 'export', status: 'pending', created_at: expect.any(String) });
  const task = await completed(secretKey, started.body.task_id);
  expect(task).toEqual({ ...started.body, status: 'completed', download_url: expect.stringMatching(/^http/), completed_at: expect.any(String) });
  expect(checkSchema('Task', task)).toEqual([]);

  const download = await fetch(present(task.download_url, 'the export’s download_url'));
  expect(download.status).toBe(200);
  expect(download.headers.get('content-disposition')).toMatch(/^attachment/);
  const lines = (await download.text()).trim().split('\n').map((l) => JSON.parse(l) as ExportLine);
  expect(lines[0]).toEqual({ type: 'user', user: { ...s.user, status: 'active' } });
  expect(lines.map((l) => l.type)).toEqual(['user', 'chat', 'message', 'message', 'message', 'chat', 'message', 'file', 'file']);
  expect(lines[1].chat).toMatchObject({ id: first, name: 'first' });
  expect(lines.slice(2, 5).map((l) => l.message?.id)).toEqual(sent);
  expect(lines[3].message).toMatchObject({ sender: 'bot', content: 'hi Ada' });
  expect(lines[5].chat).toMatchObject({ id: second });
  expect(lines[6].message?.id).toBe(inSecond);
  for (const line of lines.filter((l) => l.type === 'message')) expect(checkSchema('Message', line.message)).toEqual([]);
  // Both files, attached or not, each URL serving its bytes.
  const files = lines.filter((l) => l.type === 'file').map((l) => present(l.file, 'a file line’s file'));
  expect(files.map((f) => f.id).sort()).toEqual([attached.body.id, loose.body.id].sort());
  for (const f of files) {
    expect(f).toMatchObject({ status: 'uploaded', mime_type: 'image/png' });
    expect((await fetch(present(f.url, `file ${f.id}’s url`))).status).toBe(200);
  }
  expect(Buffer.from(await (await fetch(present(present(files.find((f) => f.id === loose.body.id), 'the loose file').url, 'the loose file’s url'))).arrayBuffer()).toString()).toContain('loose');
  // Nothing of another user; the finished task names no user.
  expect(JSON.stringify(lines)).not.toContain(other.user.id);
  const record = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.task(task.task_id) }))).Item;
  expect(record).toMatchObject({ kind: 'export', status: 'completed', download_key: expect.stringContaining(`/users/${s.user.id}/exports/`) });
  expect(record?.user_id).toBeUndefined();

  // A day later: the export's item expires (TTL; swept locally) and its object is deleted; the task gives no URL.
  const key = record?.download_key as string;
  expect(await listBucket()).toContain(key);
  await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.exportObject(s.user.id, task.task_id), UpdateExpression: 'SET #ttl = :past', ExpressionAttributeNames: { '#ttl': 'ttl' }, ExpressionAttributeValues: { ':past': 1 } }));
  await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.task(task.task_id), UpdateExpression: 'SET expires_at = :past', ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() } }));
  await until(async () => !(await listBucket()).includes(key), 15_000, 'the expired export to be deleted');
  expect((await call('GET', `/api/bot/tasks/${task.task_id}`, bot(secretKey))).body.download_url).toBeUndefined();
  // The task itself is kept as long as its file was to be (docs/user-data.md), then it is gone for the API as its
  // ttl passes, whether or not TTL has deleted the record yet (read as of a time past it, the record stored).
  const kept = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.task(task.task_id) }))).Item as { ttl: number; bot_id: string };
  expect(kept.ttl * 1000).toBe(Date.parse(record?.expires_at as string));
  await expect(botTask(kept.bot_id, task.task_id, kept.ttl * 1000 - 1000)).resolves.toMatchObject({ status: 'completed' });
  await expect(botTask(kept.bot_id, task.task_id, kept.ttl * 1000)).rejects.toBeInstanceOf(NotFoundError);
}, 60_000);

test("an erasure deletes the user's exports; another bot's user is a 404; a user being erased a 409", async () => {
  const { bot: b, secretKey } = await newBot();
  const theirs = await newBot();
  const s = await newSession(b.client_key);
  await call('POST', '/api/client/chats', { token: s.session_token, json: { name: 'x' } });
  expect((await call('POST', `/api/bot/users/${s.user.id}/export`, bot(theirs.secretKey))).status).toBe(404);
  const task = await completed(secretKey, (await call('POST', `/api/bot/users/${s.user.id}/export`, bot(secretKey))).body.task_id);
  const key = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.task(task.task_id) }))).Item?.download_key as string;
  expect(await listBucket()).toContain(key);
  const erase = await call('DELETE', `/api/bot/users/${s.user.id}`, bot(secretKey));
  const refused = await call('POST', `/api/bot/users/${s.user.id}/export`, bot(secretKey));
  expect(refused.status).toBe(409);
  expect(refused.body.error).toMatch(/being erased/);
  await completed(secretKey, erase.body.task_id);
  expect((await listBucket()).filter((k) => k.includes(s.user.id))).toEqual([]);
  expect((await scanTable()).filter((i) => i.includes(s.user.id))).toEqual([]);
}, 60_000);
