// Direct uploads, the flow (lambdas/flows/uploads.ts) against DynamoDB Local and the S3 emulator: a
// presigned POST the browser sends, the completion's checks (size, signature, executables and pages), what a
// send does with a pending or rejected file, and how every file URL opens (media inline, the rest downloaded).
import { call, userWithChat } from '../support/api';
import { checkUpload, completeUpload, createUpload, getUserFile, type NewUpload } from '../../lambdas/flows/uploads';
import { getOwnedFiles, sendMessage, webhookMarks } from '../../lambdas/flows/send';
import { retentionWindow } from '../../lambdas/policies/retention';
import { dispositionOf, toUploadJson } from '../../lambdas/entities/files';
import { listKeys, objectHead, putObject } from '../../lambdas/aws/s3';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { until } from '../support/realtime';
import { png } from '../support/files';
import { present } from '../support/contract';

const PNG = png(2008);
const HTML = Buffer.from('<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>');

async function owner() {
  const { bot, session, token, chatId } = await userWithChat();
  return { userId: session.user.id, botId: bot.id, externalId: session.user.external_id, token, chatId };
}

/** The browser's POST: every field of the ticket, then the file last, as S3 wants it. */
async function postUpload(ticket: { upload: { url: string; fields: Record<string, string> } }, bytes: Buffer, type: string): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
  form.append('file', new Blob([bytes], { type }), 'upload.bin');
  return fetch(ticket.upload.url, { method: 'POST', body: form });
}

/** The policy document of a presigned POST, as S3 reads it. */
type PostPolicy = { expiration: string; conditions: unknown[] };

const upload = (over: Partial<NewUpload> = {}): NewUpload => ({ name: 'holiday.png', size: PNG.length, mime_type: 'image/png', type: 'photo', ...over });

test('a photo: pending with a presigned POST of at most 10 minutes; its object lands; the completion makes it uploaded', async () => {
  const o = await owner();
  const ticket = await createUpload(o.userId, o.botId, upload());
  expect(ticket.record).toMatchObject({ status: 'pending', size: PNG.length, mime_type: 'image/png', type: 'photo' });
  expect(Date.parse(ticket.expires_at) - Date.now()).toBeLessThanOrEqual(600_000);
  const policy = JSON.parse(Buffer.from(ticket.upload.fields.Policy, 'base64').toString()) as PostPolicy;
  expect(policy.conditions).toEqual(
    expect.arrayContaining([['eq', '$Content-Type', 'image/png'], ['content-length-range', 1, PNG.length], { key: ticket.record.s3_key }]),
  );
  expect(Date.parse(policy.expiration) - Date.now()).toBeLessThanOrEqual(600_000);
  const json = await toUploadJson(ticket.record);
  expect(json).toMatchObject({ id: ticket.record.id, status: 'pending', url: null });
  expect((await postUpload(ticket, PNG, 'image/png')).status).toBeLessThan(300);
  const done = await completeUpload(ticket.record.s3_key);
  expect(done).toMatchObject({ status: 'uploaded' });
  // Kept a day unless a message attaches it (UNSENT_FILE_TTL_SECONDS).
  expect(done?.ttl).toBeGreaterThan(Date.now() / 1000 + 86400 - 60);
  const shown = await toUploadJson((await getUserFile(o.userId, ticket.record.id))!);
  expect(shown.status).toBe('uploaded');
  const res = await fetch(shown.url as string);
  expect(Buffer.from(await res.arrayBuffer()).equals(PNG)).toBe(true);
  expect(res.headers.get('content-type')).toBe('image/png');
  expect(res.headers.get('content-disposition')).toMatch(/^inline/);
  // A second delivery of the event changes nothing.
  expect(await completeUpload(ticket.record.s3_key)).toMatchObject({ status: 'uploaded' });
  // It can be sent now.
  const { message } = await sendMessage({ owner: o, chatId: o.chatId, bot: {}, window: retentionWindow({}), marks: webhookMarks({}) }, { content: '', content_type: 'photo', files: [ticket.record.id], complete_files: [] }, 'user');
  expect(message.files?.[0]).toMatchObject({ id: ticket.record.id, type: 'photo', size: PNG.length });
});

test('an HTML page declared as a PNG, or as a text document, is rejected with a reason and its object deleted', async () => {
  const o = await owner();
  const keysSent: string[] = [];
  for (const declared of [upload({ name: 'cat.png', size: HTML.length }), upload({ name: 'notes.txt', size: HTML.length, mime_type: 'text/plain', type: 'document' })]) {
    const ticket = await createUpload(o.userId, o.botId, declared);
    keysSent.push(ticket.record.s3_key);
    expect((await postUpload(ticket, HTML, declared.mime_type)).status).toBeLessThan(300);
    const done = await completeUpload(ticket.record.s3_key);
    expect(done).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/HTML/) });
    expect((await toUploadJson(done!)).url).toBeNull();
    await expect(completeUpload(ticket.record.s3_key)).resolves.toMatchObject({ status: 'rejected' });
    // Sending it is a 400 naming the reason; nothing is sent.
    await expect(getOwnedFiles(o.userId, [ticket.record.id])).rejects.toMatchObject({ kind: 'invalid_input', message: expect.stringMatching(/rejected: .*HTML/) });
  }
  // The objects are gone from S3.
  for (const key of keysSent) expect(await objectHead(key, 1)).toBeUndefined();
  const history = await call('GET', `/api/client/chats/${o.chatId}/messages`, { token: o.token });
  expect(history.body).toEqual([]);
});

test('a size other than the declared one is rejected; a pending file cannot be sent (409)', async () => {
  const o = await owner();
  const ticket = await createUpload(o.userId, o.botId, upload({ size: PNG.length + 10 }));
  await expect(getOwnedFiles(o.userId, [ticket.record.id])).rejects.toMatchObject({ kind: 'conflict', message: expect.stringMatching(/still uploading/) });
  expect((await postUpload(ticket, PNG, 'image/png')).status).toBeLessThan(300);
  expect(await completeUpload(ticket.record.s3_key)).toMatchObject({ status: 'rejected', reason: `the file has ${PNG.length} bytes, not the ${PNG.length + 10} declared` });
});

test('refusals before anything is written: too large, a MIME type not allowed for the type, SVG and HTML never', () => {
  expect(() => checkUpload(upload({ size: 100 * 1024 * 1024 + 1 }))).toThrow(/at most 104857600 bytes/);
  expect(() => checkUpload(upload({ mime_type: 'video/mp4' }))).toThrow(/video\/mp4 is not allowed for a photo/);
  expect(() => checkUpload(upload({ mime_type: 'image/svg+xml' }))).toThrow(/not allowed/);
  expect(() => checkUpload(upload({ mime_type: 'text/html', type: 'document' }))).toThrow(/not allowed/);
  expect(() => checkUpload(upload({ size: 100 * 1024 * 1024, mime_type: 'video/mp4', type: 'video' }))).not.toThrow();
});

test('another user does not see the file; an object with no pending file is not kept', async () => {
  const a = await owner();
  const b = await owner();
  const ticket = await createUpload(a.userId, a.botId, upload());
  expect(await getUserFile(b.userId, ticket.record.id)).toBeUndefined();
  expect(await getUserFile(a.userId, ticket.record.id)).toMatchObject({ id: ticket.record.id });
  expect(await completeUpload('bots/x/users/y/files/not-a-file')).toBeUndefined();
});

test('every file URL of a small upload opens as its kind says: media inline, anything else downloaded', async () => {
  const { token } = await userWithChat();
  const small = async (name: string, type: string, bytes: Buffer) => {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type }), name);
    const res = await call('POST', '/api/client/files', { token, body: form });
    expect(res.status).toBe(201);
    return fetch(present(res.body.url, 'the file’s url'));
  };
  const page = await small('page.html', 'text/html', HTML);
  expect(page.headers.get('content-disposition')).toMatch(/^attachment/);
  expect(page.headers.get('content-type')).toBe('application/octet-stream');
  const photo = await small('p.png', 'image/png', PNG);
  expect(photo.headers.get('content-disposition')).toMatch(/^inline/);
});

test('a pending upload that never completes: expired, it is gone for reads and sends; its record removed (TTL), its object goes too', async () => {
  const o = await owner();
  const ticket = await createUpload(o.userId, o.botId, upload());
  // Its bytes landed but no completion ran (every delivery of S3's event failed): pending, with an object.
  await putObject(ticket.record.s3_key, PNG, 'image/png', 'inline');
  expect(await objectHead(ticket.record.s3_key, 1)).toBeDefined();
  // 24 hours later: expired, though DynamoDB's TTL may take days to delete it.
  const key = keys.file(ticket.record.id);
  await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: key, UpdateExpression: 'SET #ttl = :past', ExpressionAttributeNames: { '#ttl': 'ttl' }, ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 } }));
  expect(await getUserFile(o.userId, ticket.record.id)).toBeUndefined();
  await expect(getOwnedFiles(o.userId, [ticket.record.id])).rejects.toMatchObject({ kind: 'invalid_input', message: expect.stringMatching(/no uploaded file/) });
  // TTL deletes the record: the stream's REMOVE deletes the object.
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: key }));
  await until(async () => (await objectHead(ticket.record.s3_key, 1)) === undefined, 10_000, 'the expired upload\'s object to be deleted');
});

test('how a type opens: media inline; pages, XML and scripts as bytes; every other type downloaded as itself', () => {
  const opens = (mime: string) => dispositionOf({ name: 'f', mime_type: mime });
  expect(opens('image/png')).toEqual({ contentType: 'image/png', disposition: 'inline; filename="f"' });
  expect(opens('video/mp4').disposition).toMatch(/^inline/);
  expect(opens('audio/ogg').disposition).toMatch(/^inline/);
  // Inline only what an upload's bytes are checked against: other media subtypes download.
  expect(opens('video/x+xml')).toEqual({ contentType: 'application/octet-stream', disposition: 'attachment; filename="f"' });
  for (const other of ['audio/x-unknown', 'video/x-msvideo', 'image/bmp']) expect([other, opens(other)]).toEqual([other, { contentType: other, disposition: 'attachment; filename="f"' }]);
  for (const page of ['text/html', 'application/xhtml+xml', 'image/svg+xml', 'application/xml', 'text/xml', 'text/javascript', 'application/rss+xml']) {
    expect([page, opens(page)]).toEqual([page, { contentType: 'application/octet-stream', disposition: 'attachment; filename="f"' }]);
  }
  const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  for (const doc of [docx, 'application/pdf', 'text/plain']) expect([doc, opens(doc)]).toEqual([doc, { contentType: doc, disposition: 'attachment; filename="f"' }]);
});

test('the same presigned POST sent again after the file was uploaded changes nothing it serves: its checked copy stays, the new bytes are deleted', async () => {
  const o = await owner();
  const ticket = await createUpload(o.userId, o.botId, upload());
  const uploadKey = ticket.record.s3_key;
  expect((await postUpload(ticket, PNG, 'image/png')).status).toBeLessThan(300);
  const done = await completeUpload(uploadKey);
  expect(done).toMatchObject({ status: 'uploaded', s3_key: expect.stringMatching(new RegExp(`^${uploadKey}\\.[0-9a-f]{12}$`)) });
  // Within its 10 minutes the policy still takes a body of up to the declared size: a page, under the PNG's name.
  const page = Buffer.concat([HTML, Buffer.alloc(PNG.length - HTML.length, 0x20)]);
  expect((await postUpload(ticket, page, 'image/png')).status).toBeLessThan(300);
  expect(await completeUpload(uploadKey)).toMatchObject({ status: 'uploaded', s3_key: done!.s3_key });
  expect(await objectHead(uploadKey, 1)).toBeUndefined();
  const served = await fetch((await toUploadJson((await getUserFile(o.userId, ticket.record.id))!)).url as string);
  expect(Buffer.from(await served.arrayBuffer()).equals(PNG)).toBe(true);
});

test('two completions of one file whose bytes changed between them: the file serves only what the winner checked; the loser\'s copy is deleted', async () => {
  const o = await owner();
  const ticket = await createUpload(o.userId, o.botId, upload());
  const uploadKey = ticket.record.s3_key;
  const key = keys.file(ticket.record.id);
  // The PNG is there (written with a PUT, which the local bucket does not notify: only this test's completions run).
  await putObject(uploadKey, PNG, 'image/png', 'inline');
  const page = Buffer.concat([HTML, Buffer.alloc(PNG.length - HTML.length, 0x20)]);
  const real = dynamo.send.bind(dynamo);
  let raced: Promise<unknown> | undefined;
  // The stand-in takes the promise form of send (the one the service calls), not the client's callback overloads.
  const send = jest.spyOn<{ send: (cmd: Parameters<typeof real>[0]) => Promise<unknown> }, 'send'>(dynamo, 'send').mockImplementation(async (cmd) => {
    const settling = cmd instanceof UpdateCommand && JSON.stringify(cmd.input.Key) === JSON.stringify(key) && cmd.input.ExpressionAttributeValues?.[':status'] === 'uploaded';
    if (settling && !raced) {
      // The PNG's completion has checked its copy; before it settles, the page replaces the bytes and its own
      // completion runs to the end.
      raced = (async () => {
        await putObject(uploadKey, page, 'image/png', 'inline');
        return completeUpload(uploadKey);
      })();
      expect(await raced).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/HTML/) });
    }
    return real(cmd);
  });
  let settled;
  try {
    settled = await completeUpload(uploadKey);
  } finally {
    send.mockRestore();
  }
  expect(raced).toBeDefined();
  expect(settled).toMatchObject({ status: 'rejected' });
  // Nothing of the file is left in the bucket: neither the upload key nor either completion's copy.
  expect(await listKeys(uploadKey)).toEqual([]);
  await expect(getOwnedFiles(o.userId, [ticket.record.id])).rejects.toMatchObject({ kind: 'invalid_input' });
});

test('a file uploaded before sealed copies existed (its record on the upload key): a write to that key is checked and sealed, its expiry kept', async () => {
  const o = await owner();
  const ticket = await createUpload(o.userId, o.botId, upload());
  const uploadKey = ticket.record.s3_key;
  // As the completer once left it: uploaded, serving the upload key, kept for ever (a sent file, retention off).
  await putObject(uploadKey, PNG, 'image/png', 'inline');
  await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.file(ticket.record.id), UpdateExpression: 'SET #s = :u REMOVE #ttl', ExpressionAttributeNames: { '#s': 'status', '#ttl': 'ttl' }, ExpressionAttributeValues: { ':u': 'uploaded' } }));
  const other = png(PNG.length, 9);
  await putObject(uploadKey, other, 'image/png', 'inline');
  const settled = await completeUpload(uploadKey);
  expect(settled).toMatchObject({ status: 'uploaded', s3_key: expect.stringMatching(/\.[0-9a-f]{12}$/) });
  expect(settled?.ttl).toBeUndefined();
  expect(await listKeys(uploadKey)).toEqual([settled!.s3_key]);
  const served = await fetch((await toUploadJson(settled!)).url as string);
  expect(Buffer.from(await served.arrayBuffer()).equals(other)).toBe(true);
});
