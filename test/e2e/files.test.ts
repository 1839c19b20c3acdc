// POST /files and file messages: bytes round-trip through S3 presigned URLs; ownership; size and part rules.
import { randomBytes } from 'node:crypto';
import { botItems, call, newSession, userWithChat, UUID } from '../support/api';
import { firstFileUrl, present } from '../support/contract';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

function form(parts: { name: string; value: Buffer | string; filename?: string; type?: string }[]): FormData {
  const fd = new FormData();
  for (const p of parts) {
    if (p.filename !== undefined) fd.append(p.name, new Blob([p.value], { type: p.type ?? '' }), p.filename);
    else fd.append(p.name, String(p.value));
  }
  return fd;
}

const upload = (token: string, fd: FormData) => call('POST', '/api/client/files', { token, body: fd });

test('upload a PNG → 201 with id, type, url, status, metadata; the URL serves the same bytes', async () => {
  const { token, chatId, bot, userId } = await userWithChat();
  const res = await upload(token, form([{ name: 'file', value: PNG, filename: 'pixel.png', type: 'image/png' }]));
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    id: expect.stringMatching(UUID),
    type: 'photo',
    url: expect.stringMatching(/^http/),
    status: 'uploaded',
    name: 'pixel.png',
    size: PNG.length,
    mime_type: 'image/png',
    created_at: expect.any(String),
  });
  // Stored under a key that names bot and user.
  expect(new URL(present(res.body.url, 'the file’s url')).pathname).toContain(`/bots/${bot.id}/users/${userId}/`);
  const download = await fetch(present(res.body.url, 'the file’s url'));
  expect(download.status).toBe(200);
  expect(Buffer.from(await download.arrayBuffer()).equals(PNG)).toBe(true);
  expect(download.headers.get('content-type')).toBe('image/png');
  // The emulator checks signatures, as S3 does: the same URL with another signature or a later expiry is refused.
  const tampered = new URL(present(res.body.url, 'the file’s url'));
  tampered.searchParams.set('X-Amz-Signature', '0'.repeat(64));
  expect((await fetch(tampered)).status).toBe(403);
  const extended = new URL(present(res.body.url, 'the file’s url'));
  extended.searchParams.set('X-Amz-Expires', '604800');
  expect((await fetch(extended)).status).toBe(403);

  // A photo message carrying the file: its URL also downloads the same bytes (signed at read time).
  const msg = await call('POST', `/api/client/chats/${chatId}/messages`, {
    token,
    json: { content: '', content_type: 'photo', files: [res.body.id] },
  });
  expect(msg.status).toBe(201);
  expect(msg.body.content_type).toBe('photo');
  expect(msg.body.files).toEqual([
    { id: res.body.id, type: 'photo', url: expect.stringMatching(/^http/), name: 'pixel.png', size: PNG.length, mime_type: 'image/png' },
  ]);
  const history = await call('GET', `/api/client/chats/${chatId}/messages`, { token });
  const fromHistory = await fetch(firstFileUrl(history.body[0]));
  expect(Buffer.from(await fromHistory.arrayBuffer()).equals(PNG)).toBe(true);
});

test('type is guessed from the MIME type when absent and taken from the type part when given', async () => {
  const { token } = await userWithChat();
  const cases: [string, string | undefined, string][] = [
    ['video/mp4', undefined, 'video'],
    ['audio/ogg', undefined, 'audio'],
    ['application/pdf', undefined, 'document'],
    ['audio/ogg', 'voice', 'voice'],
    ['', undefined, 'document'],
  ];
  for (const [mime, type, expected] of cases) {
    const parts: Parameters<typeof form>[0] = [{ name: 'file', value: randomBytes(64), filename: 'f.bin', type: mime }];
    if (type) parts.push({ name: 'type', value: type });
    const res = await upload(token, form(parts));
    expect({ mime, type, status: res.status, got: res.body.type }).toEqual({ mime, type, status: 201, got: expected });
  }
});

test('complete_files: direct http(s) links are returned as given', async () => {
  const { token, chatId } = await userWithChat();
  const res = await call('POST', `/api/client/chats/${chatId}/messages`, {
    token,
    json: { content: 'see', complete_files: [{ url: 'https://cdn.example/cat.jpg', type: 'photo' }] },
  });
  expect(res.status).toBe(201);
  expect(res.body.files).toEqual([{ id: null, type: 'photo', url: 'https://cdn.example/cat.jpg', name: null, size: null, mime_type: null }]);
  for (const bad of ['javascript:alert(1)', 'ftp://x.example/a', 'data:image/png;base64,AAAA', '/relative.png', 'https://' + 'a'.repeat(2100)]) {
    const r = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: '', complete_files: [{ url: bad, type: 'photo' }] } });
    expect({ bad: bad.slice(0, 30), status: r.status }).toEqual({ bad: bad.slice(0, 30), status: 400 });
  }
});

test("another user's file → 403; unknown file → 400; nothing written", async () => {
  const owner = await userWithChat();
  const file = await upload(owner.token, form([{ name: 'file', value: PNG, filename: 'a.png', type: 'image/png' }]));
  const other = await newSession(owner.bot.client_key);
  const otherChat = await call('POST', '/api/client/chats', { token: other.session_token, json: { name: 'x' } });
  const before = await botItems(owner.bot.id);
  const foreign = await call('POST', `/api/client/chats/${otherChat.body.id}/messages`, {
    token: other.session_token,
    json: { content: '', content_type: 'photo', files: [file.body.id] },
  });
  expect(foreign).toMatchObject({ status: 403, body: { error: expect.any(String) } });
  const unknown = await call('POST', `/api/client/chats/${otherChat.body.id}/messages`, {
    token: other.session_token,
    json: { content: 'x', files: ['00000000-0000-4000-8000-000000000000'] },
  });
  expect(unknown).toMatchObject({ status: 400, body: { error: expect.any(String) } });
  // Another user's chat is a 403 whatever the files say (the chat's refusal wins over the files').
  const notYours = await call('POST', `/api/client/chats/${otherChat.body.id}/messages`, {
    token: owner.token,
    json: { content: 'x', files: ['00000000-0000-4000-8000-000000000000'] },
  });
  expect(notYours).toMatchObject({ status: 403, body: { error: expect.any(String) } });
  expect(await botItems(owner.bot.id)).toEqual(before);
});

describe('upload errors', () => {
  test.each([
    ['no file part', () => form([{ name: 'type', value: 'photo' }]), 400],
    ['file part under another name', () => form([{ name: 'upload', value: PNG, filename: 'a.png' }]), 400],
    ['two file parts', () => form([{ name: 'file', value: PNG, filename: 'a.png' }, { name: 'file', value: PNG, filename: 'b.png' }]), 400],
    ['unknown type', () => form([{ name: 'file', value: PNG, filename: 'a.png' }, { name: 'type', value: 'sticker' }]), 400],
    ['empty file', () => form([{ name: 'file', value: Buffer.alloc(0), filename: 'a.png' }]), 400],
    ['file over 4 MB', () => form([{ name: 'file', value: Buffer.alloc(4 * 1024 * 1024 + 1), filename: 'big.bin' }]), 413],
  ])('%s → rejected with {error}, nothing written', async (_name, make, status) => {
    const { token, bot } = await userWithChat();
    const before = await botItems(bot.id);
    const res = await upload(token, make());
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: expect.any(String) });
    expect(await botItems(bot.id)).toEqual(before);
  });

  test('a file of exactly 4 MB is accepted', async () => {
    const { token } = await userWithChat();
    const res = await upload(token, form([{ name: 'file', value: Buffer.alloc(4 * 1024 * 1024, 7), filename: 'max.bin' }]));
    expect(res.status).toBe(201);
    expect(res.body.size).toBe(4 * 1024 * 1024);
  });

  test('not multipart, or a broken multipart body → 400', async () => {
    const { token } = await userWithChat();
    const json = await call('POST', '/api/client/files', { token, json: { file: 'x' } });
    expect(json).toMatchObject({ status: 400, body: { error: expect.any(String) } });
    const broken = await call('POST', '/api/client/files', {
      token,
      headers: { 'content-type': 'multipart/form-data; boundary=XYZ' },
      body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc',
    });
    expect(broken).toMatchObject({ status: 400, body: { error: expect.any(String) } });
    const noBoundary = await call('POST', '/api/client/files', { token, headers: { 'content-type': 'multipart/form-data; charset=utf-8' }, body: 'x' });
    expect(noBoundary).toMatchObject({ status: 400, body: { error: expect.any(String) } });
  });

  test('file names are cleaned of paths; a control character in the part header is a 400', async () => {
    const { token } = await userWithChat();
    for (const filename of ['../../etc/passwd.png', '..\\..\\passwd.png']) {
      const res = await upload(token, form([{ name: 'file', value: PNG, filename, type: 'image/png' }]));
      expect(res.status).toBe(201);
      expect(res.body.name).toBe('passwd.png');
    }
    const ctl = await upload(token, form([{ name: 'file', value: PNG, filename: 'pass\u0007wd.png', type: 'image/png' }]));
    expect(ctl).toMatchObject({ status: 400, body: { error: expect.any(String) } });
  });

  test('a UTF-16 file name cut in half (a lone surrogate) → 201, the broken character replaced; the file downloads', async () => {
    const { token } = await userWithChat();
    // RFC 5987's filename*: UTF-16LE bytes of U+D800 (half a pair), then ".p".
    const body = Buffer.concat([
      Buffer.from("--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename*=utf-16le''%00%D8%2E%00p%00\r\nContent-Type: text/plain\r\n\r\n"),
      Buffer.from('hello'),
      Buffer.from('\r\n--XYZ--\r\n'),
    ]);
    const res = await call('POST', '/api/client/files', { token, headers: { 'content-type': 'multipart/form-data; boundary=XYZ' }, body });
    expect(res).toMatchObject({ status: 201, body: { name: '\uFFFD.p', status: 'uploaded' } });
    expect(await (await fetch(present(res.body.url, 'the file’s url'))).text()).toBe('hello');
  });
});
