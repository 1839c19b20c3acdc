// Direct uploads over real HTTP, as a browser does them: ask for an upload (Client and Bot API), POST the
// bytes to the S3 emulator's URL, and let the emulator's object event run the completion function; then
// GET /files/{id}, the user's `file` publication, and sending the file. Every refusal writes nothing.
import { botItems, call, userWithChat, UUID, type CallOptions } from '../support/api';
import { liveClient, until } from '../support/realtime';
import { listKeys } from '../../lambdas/aws/s3';
import { png } from '../support/files';
import { firstFileUrl, present, realtimeOf, type FileInfo } from '../support/contract';

const PNG = png(8 + 6 * 1024 * 1024);
// An executable (a Windows PE starts "MZ") under a photo's name and type.
const EXE = Buffer.concat([Buffer.from('MZ\x90\x00\x03\x00\x00\x00', 'latin1'), Buffer.alloc(5000, 1)]);

const bot = <M extends string, U extends string>(method: M, path: U, secret: string, opts: CallOptions = {}) =>
  call(method, `/api/bot${path}` as const, { ...opts, headers: { ...opts.headers, authorization: `Bearer ${secret}` } });

/** The browser's POST: every field of the ticket, then the file last, as S3 wants it. */
async function postToS3(ticket: { upload: { url: string; fields: Record<string, string> } }, bytes: Buffer, type: string): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
  form.append('file', new Blob([bytes], { type }), 'upload.bin');
  return fetch(ticket.upload.url, { method: 'POST', body: form });
}

/** GET /files/{id} until the checks have settled it. */
async function settledFile(token: string, id: string) {
  let file: FileInfo | undefined;
  await until(async () => (file = (await call('GET', `/api/client/files/${id}`, { token })).body).status !== 'pending', 10_000, `file ${id} to settle`);
  return present(file, `file ${id}`);
}

test('a 6 MB photo: 201 pending with a presigned POST; the bytes go to S3; the file settles uploaded, is published and can be sent', async () => {
  const u = await userWithChat();
  const live = await liveClient(realtimeOf(u.session));
  try {
    const res = await call('POST', '/api/client/files/uploads', { token: u.token, json: { name: 'IMG_0001.PNG', size: PNG.length, mime_type: 'image/PNG' } });
    expect(res.status).toBe(201);
    const { file, upload, expires_at } = res.body;
    expect(file).toMatchObject({ id: expect.stringMatching(UUID), type: 'photo', status: 'pending', url: null, size: PNG.length, mime_type: 'image/png', name: 'IMG_0001.PNG' });
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(600_000);
    expect(upload.fields['Content-Type']).toBe('image/png');
    // Sending it before its bytes are there: 409, nothing sent.
    const early = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content_type: 'photo', files: [file.id] } });
    expect(early.status).toBe(409);
    expect(early.body.error).toMatch(/still uploading/);

    expect((await postToS3(res.body, PNG, 'image/png')).status).toBe(204);
    const published = await live.waitFor((p) => p.type === 'file' && p.data.id === file.id, 10_000);
    expect(published.data).toMatchObject({ status: 'uploaded', url: expect.any(String) });
    const shown = await settledFile(u.token, file.id);
    expect(shown).toMatchObject({ id: file.id, status: 'uploaded' });
    const bytes = Buffer.from(await (await fetch(present(shown.url, 'the file’s url'))).arrayBuffer());
    expect(bytes.equals(PNG)).toBe(true);

    const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content_type: 'photo', files: [file.id] } });
    expect(sent.status).toBe(201);
    expect(present(sent.body.files, 'the message’s files')[0]).toMatchObject({ id: file.id, type: 'photo', size: PNG.length, mime_type: 'image/png' });
  } finally {
    live.close();
  }
});

test('the same presigned POST sent again after the photo was sent, with other bytes of its size and type, changes nothing the message serves', async () => {
  const u = await userWithChat();
  const photo = png(3008, 1);
  const res = await call('POST', '/api/client/files/uploads', { token: u.token, json: { name: 'cat.png', size: photo.length, mime_type: 'image/png' } });
  expect((await postToS3(res.body, photo, 'image/png')).status).toBe(204);
  expect(await settledFile(u.token, res.body.file.id)).toMatchObject({ status: 'uploaded' });
  const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content_type: 'photo', files: [res.body.file.id] } });
  expect(sent.status).toBe(201);
  const uploadKey = res.body.upload.fields.key;
  const page = Buffer.concat([Buffer.from('<!doctype html><script>alert(1)</script>'), Buffer.alloc(photo.length - 40, 0x20)]);
  // Another valid photo, then a page, each exactly as long, with the ticket's fields as given (within its 10 minutes).
  for (const other of [png(3008, 2), page]) {
    expect(other.length).toBe(photo.length);
    expect((await postToS3(res.body, other, 'image/png')).status).toBe(204);
    // S3 accepted the bytes; the completion deletes them, as the file was settled already.
    await until(async () => !(await listKeys(uploadKey)).includes(uploadKey), 10_000, 'the re-POSTed object to be deleted');
    const history = await call('GET', `/api/client/chats/${u.chatId}/messages`, { token: u.token });
    const shown = await fetch(firstFileUrl(history.body[0]));
    expect([shown.status, Buffer.from(await shown.arrayBuffer()).equals(photo)]).toEqual([200, true]);
    const file = (await call('GET', `/api/client/files/${res.body.file.id}`, { token: u.token })).body;
    expect(file.status).toBe('uploaded');
    expect(Buffer.from(await (await fetch(present(file.url, 'the file’s url'))).arrayBuffer()).equals(photo)).toBe(true);
  }
});

test('an executable renamed .jpg ends rejected with a reason, its object deleted, and cannot be sent (400)', async () => {
  const u = await userWithChat();
  const res = await call('POST', '/api/client/files/uploads', { token: u.token, json: { name: 'holiday.jpg', size: EXE.length, mime_type: 'image/jpeg' } });
  expect(res.status).toBe(201);
  expect((await postToS3(res.body, EXE, 'image/jpeg')).status).toBe(204);
  const file = await settledFile(u.token, res.body.file.id);
  expect(file).toMatchObject({ status: 'rejected', url: null, reason: expect.stringMatching(/executable/i) });
  // The object is gone: a presigned GET of its key (the bot's history would hand one out) finds nothing.
  const key = res.body.upload.fields.key;
  expect(key).toContain(file.id);
  const sent = await call('POST', `/api/client/chats/${u.chatId}/messages`, { token: u.token, json: { content_type: 'photo', files: [file.id] } });
  expect(sent.status).toBe(400);
  expect(sent.body.error).toMatch(/rejected/);
  expect((await call('GET', `/api/client/chats/${u.chatId}/messages`, { token: u.token })).body).toEqual([]);
});

test('S3 refuses what the policy does not allow: another type, more bytes than declared', async () => {
  const u = await userWithChat();
  const res = await call('POST', '/api/client/files/uploads', { token: u.token, json: { name: 'a.png', size: 1000, mime_type: 'image/png' } });
  const wrongType = { ...res.body, upload: { ...res.body.upload, fields: { ...res.body.upload.fields, 'Content-Type': 'text/html' } } };
  expect((await postToS3(wrongType, PNG.subarray(0, 1000), 'text/html')).status).toBe(403);
  expect((await postToS3(res.body, PNG.subarray(0, 1001), 'image/png')).status).toBe(400);
  expect((await call('GET', `/api/client/files/${res.body.file.id}`, { token: u.token })).body.status).toBe('pending');
});

test('refusals: 400 for a bad declaration (nothing written), 401 without a session', async () => {
  const u = await userWithChat();
  const before = await botItems(u.bot.id);
  const ok = { name: 'a.png', size: 1000, mime_type: 'image/png' };
  const bad: [unknown, RegExp][] = [
    [{ ...ok, size: 150 * 1024 * 1024 }, /size: a file may have at most 104857600 bytes/],
    [{ ...ok, size: 0 }, /size/],
    [{ ...ok, size: 1.5 }, /size/],
    [{ ...ok, size: '1000' }, /size/],
    [{ ...ok, type: 'sticker' }, /type: must be one of/],
    [{ ...ok, type: 'video' }, /image\/png is not allowed for a video/],
    [{ ...ok, mime_type: 'image/svg+xml' }, /not allowed/],
    [{ ...ok, mime_type: 'not a mime' }, /mime_type/],
    [{ ...ok, name: '' }, /name/],
    [{ size: 1000, mime_type: 'image/png' }, /name/],
    [[ok], /object/i],
  ];
  for (const [json, error] of bad) {
    const res = await call('POST', '/api/client/files/uploads', { token: u.token, json });
    expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(error)]);
  }
  expect((await call('POST', '/api/client/files/uploads', { token: u.token, body: 'not json', headers: { 'content-type': 'application/json' } })).status).toBe(400);
  expect((await call('POST', '/api/client/files/uploads', { json: ok })).status).toBe(401);
  expect(await botItems(u.bot.id)).toEqual(before);
});

test('GET /files/{id}: the owner sees it; another user, an unknown id → 404; a malformed id → 400', async () => {
  const a = await userWithChat();
  const b = await userWithChat();
  const { body } = await call('POST', '/api/client/files/uploads', { token: a.token, json: { name: 'clip.mp4', size: 5000, mime_type: 'video/mp4' } });
  expect((await call('GET', `/api/client/files/${body.file.id}`, { token: a.token })).body).toMatchObject({ id: body.file.id, type: 'video', status: 'pending' });
  expect((await call('GET', `/api/client/files/${body.file.id}`, { token: b.token })).status).toBe(404);
  expect((await call('GET', '/api/client/files/00000000-0000-4000-8000-000000000000', { token: a.token })).status).toBe(404);
  expect((await call('GET', '/api/client/files/nope', { token: a.token })).status).toBe(400);
  expect((await call('GET', `/api/client/files/${body.file.id}`)).status).toBe(401);
});

test('the Bot API asks for an upload for one of its chats; the reply attaches it once uploaded; another bot’s chat is 404', async () => {
  const u = await userWithChat();
  const other = await userWithChat();
  const json = { chat_id: u.chatId, name: 'report.pdf', size: 600, mime_type: 'application/pdf' };
  const res = await bot('POST', '/files/uploads', u.secretKey, { json });
  expect(res.status).toBe(201);
  expect(res.body.file).toMatchObject({ type: 'document', status: 'pending' });
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(591, 0x20)]);
  expect((await postToS3(res.body, pdf, 'application/pdf')).status).toBe(204);
  await settledFile(u.token, res.body.file.id);
  const reply = await bot('POST', `/chats/${u.chatId}/messages`, u.secretKey, { json: { content: 'Your report', files: [res.body.file.id] } });
  expect(reply.status).toBe(201);
  const opened = await fetch(firstFileUrl(reply.body));
  expect(opened.headers.get('content-disposition')).toMatch(/^attachment/);

  const before = await botItems(other.bot.id);
  expect((await bot('POST', '/files/uploads', other.secretKey, { json })).status).toBe(404);
  expect((await bot('POST', '/files/uploads', u.secretKey, { json: { ...json, chat_id: undefined } })).status).toBe(400);
  expect((await bot('POST', '/files/uploads', u.secretKey, { json: { ...json, mime_type: 'text/html' } })).status).toBe(400);
  expect(await botItems(other.bot.id)).toEqual(before);
});
