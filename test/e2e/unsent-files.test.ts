// Files uploaded but never sent, through the running local stack: they expire after UNSENT_FILE_TTL_SECONDS
// (24 h by default), record and object, and give their bytes back to the user's storage quota; a file a
// message attaches is kept as its bot's retention says (for ever with retention off). Time is moved by
// setting an expiry into the past; the stack's TTL sweeper and stream consumers do the rest.
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, userWithChat } from '../support/api';
import { until } from '../support/realtime';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { listKeys } from '../../lambdas/aws/s3';
import { keys } from '../../lambdas/entities/keys';
import { fileKeyPrefix, type FileRecord } from '../../lambdas/entities/files';
import { keepSentFiles } from '../../lambdas/flows/files-sent';
import { releaseRemovedFile } from '../../lambdas/policies/storage-quota';
import type { MessageItem } from '../../lambdas/entities/messages';
import { png } from '../support/files';
import { present } from '../support/contract';

const PNG = png(3008);

const fileRecord = async (id: string) => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.file(id), ConsistentRead: true }))).Item as FileRecord | undefined;
const openBytes = async (userId: string) =>
  Number((await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.uploadQuota(userId), ConsistentRead: true }))).Item?.open_bytes ?? 0);

async function smallUpload(token: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'p.png');
  const res = await call('POST', '/api/client/files', { token, body: form });
  expect(res.status).toBe(201);
  return res.body.id;
}

async function directUpload(token: string): Promise<string> {
  const ticket = (await call('POST', '/api/client/files/uploads', { token, json: { name: 'p.png', size: PNG.length, mime_type: 'image/png' } })).body;
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields as Record<string, string>)) form.append(k, v);
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'p.png');
  expect((await fetch(ticket.upload.url, { method: 'POST', body: form })).status).toBe(204);
  await until(async () => (await fileRecord(ticket.file.id))?.status === 'uploaded', 10_000, 'the direct upload to settle');
  return ticket.file.id;
}

const expectExpiresInADay = (f: FileRecord | undefined) => {
  const inADay = Date.now() / 1000 + 86400;
  expect(f?.ttl).toBeGreaterThan(inADay - 60);
  expect(f?.ttl).toBeLessThanOrEqual(inADay + 1);
};

test('a file uploaded but never sent (either way) expires after 24 h: record and object gone after the sweep, its bytes given back', async () => {
  const u = await userWithChat();
  const ids = [await smallUpload(u.token), await directUpload(u.token)];
  for (const id of ids) expectExpiresInADay(await fileRecord(id));
  expect(await openBytes(u.userId)).toBe(2 * PNG.length);
  const prefix = fileKeyPrefix(u.bot.id, u.userId);
  expect(await listKeys(prefix)).toHaveLength(2);

  // A day later (the expiry moved into the past): the TTL sweep removes the records, the stream their objects.
  for (const id of ids) {
    await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.file(id), UpdateExpression: 'SET #ttl = :past', ExpressionAttributeNames: { '#ttl': 'ttl' }, ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 } }));
  }
  for (const id of ids) expect((await call('GET', `/api/client/files/${id}`, { token: u.token })).status).toBe(404);
  await until(async () => (await Promise.all(ids.map(fileRecord))).every((f) => f === undefined), 15_000, 'the sweep to remove the records');
  await until(async () => (await listKeys(prefix)).length === 0, 10_000, 'the objects to be deleted');
  await until(async () => (await openBytes(u.userId)) === 0, 10_000, 'the bytes to be given back');
  const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content: '', content_type: 'photo', files: [ids[0]] } });
  expect(sent.status).toBe(400);
});

test('a sent file is kept: with retention off its expiry is removed, and the sweep leaves it; its bytes go back once however often the record comes', async () => {
  const u = await userWithChat();
  const ids = [await smallUpload(u.token), await directUpload(u.token)];
  const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content: '', content_type: 'photo', files: ids } });
  expect(sent.status).toBe(201);
  await until(async () => (await Promise.all(ids.map(fileRecord))).every((f) => f?.sent_at === sent.body.created_at && f?.ttl === undefined), 10_000, 'the files to be marked sent');
  expect(await openBytes(u.userId)).toBe(0);
  // The stream record delivered again (a retried batch): nothing given back twice.
  const item = { ...sent.body, user_id: u.userId, bot_id: u.bot.id, files: (await Promise.all(ids.map(fileRecord))).map((f) => ({ id: f!.id, size: f!.size, counted: true })) };
  await keepSentFiles(item as unknown as MessageItem, {});
  expect(await openBytes(u.userId)).toBe(0);
  // Its message's URLs serve the files (the sweep runs every 2 s: they stay).
  const history = await call('GET', `/api/client/chats/${u.chatId}/messages`, { token: u.token });
  for (const f of present(history.body[0].files, 'the message’s files')) expect(Buffer.from(await (await fetch(present(f.url, 'a file’s url'))).arrayBuffer()).equals(PNG)).toBe(true);
  expect(await listKeys(fileKeyPrefix(u.bot.id, u.userId))).toHaveLength(2);
});

test('with retention on, a sent file expires with its message; an unsent one removed twice (a redelivered REMOVE) gives its bytes back once', async () => {
  const u = await userWithChat({ retention_days: 3650 });
  const [kept, loose] = [await smallUpload(u.token), await smallUpload(u.token)];
  const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content: '', content_type: 'photo', files: [kept] } });
  // The test stack's retention day lasts a second (RETENTION_DAY_SECONDS).
  const expiry = Math.ceil(Date.parse(sent.body.created_at) / 1000) + 3650;
  await until(async () => (await fileRecord(kept))?.ttl === expiry, 10_000, 'the sent file dated by its bot\'s retention');
  await until(async () => (await openBytes(u.userId)) === PNG.length, 10_000, 'the sent file\'s bytes given back');
  // The loose file deleted (as TTL does): its REMOVE gives its bytes back; the same REMOVE again gives nothing.
  const old = await fileRecord(loose);
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.file(loose) }));
  await until(async () => (await openBytes(u.userId)) === 0, 10_000, 'the removed file\'s bytes given back');
  await releaseRemovedFile(old as FileRecord);
  expect(await openBytes(u.userId)).toBe(0);
});
