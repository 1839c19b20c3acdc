// Bad input on every write route: the contract's status, a JSON {error}, never a 500, and nothing written.
import { botItems, call, userWithChat } from '../support/api';

type Case = [name: string, init: { body?: string; json?: unknown; headers?: Record<string, string> }];

const bodyCases = (extra: Case[]): Case[] => [
  ['malformed JSON', { body: '{"name": ', headers: { 'content-type': 'application/json' } }],
  ['JSON array', { json: [1, 2] }],
  ['JSON string', { json: 'hello' }],
  ['JSON null', { json: null }],
  ['empty body', { body: '', headers: { 'content-type': 'application/json' } }],
  ['binary garbage', { body: '\u0000\u0001\u0002', headers: { 'content-type': 'application/octet-stream' } }],
  ...extra,
];

test('POST /chats: bad bodies → 400 {error}, nothing written', async () => {
  const { token, bot } = await userWithChat();
  const before = await botItems(bot.id);
  const cases = bodyCases([
    ['name missing', { json: { additional_info: {} } }],
    ['name empty', { json: { name: '' } }],
    ['name blank', { json: { name: '   ' } }],
    ['name too long', { json: { name: 'n'.repeat(201) } }],
    ['name a number', { json: { name: 5 } }],
    ['name an object', { json: { name: { $gt: '' } } }],
    ['additional_info an array', { json: { name: 'x', additional_info: [1] } }],
    ['additional_info a string', { json: { name: 'x', additional_info: 'x' } }],
    ['additional_info null', { json: { name: 'x', additional_info: null } }],
    ['additional_info too large', { json: { name: 'x', additional_info: { blob: 'b'.repeat(9000) } } }],
    ['image_url a number', { json: { name: 'x', image_url: 1 } }],
    ['image_url not http', { json: { name: 'x', image_url: 'javascript:alert(1)' } }],
  ]);
  for (const [name, init] of cases) {
    const res = await call('POST', '/api/client/chats', { token, ...init });
    expect({ name, status: res.status }).toEqual({ name, status: 400 });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
  expect(await botItems(bot.id)).toEqual(before);
});

test('POST messages: bad bodies → 400 {error}, nothing written', async () => {
  const { token, bot, chatId } = await userWithChat();
  const before = await botItems(bot.id);
  const cases = bodyCases([
    ['content a number', { json: { content: 1 } }],
    ['content null', { json: { content: null } }],
    ['content empty without files', { json: { content: '' } }],
    ['content whitespace without files', { json: { content: ' \n ' } }],
    ['content over 10000 characters', { json: { content: 'c'.repeat(10_001) } }],
    ['unknown content_type', { json: { content: 'x', content_type: 'sticker' } }],
    ['content_type a number', { json: { content: 'x', content_type: 1 } }],
    ['files not an array', { json: { content: 'x', files: 'abc' } }],
    ['files with a non-id', { json: { content: 'x', files: ['../../x'] } }],
    ['files with a number', { json: { content: 'x', files: [1] } }],
    ['files repeated', { json: { content: 'x', files: ['00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000000'] } }],
    ['too many files', { json: { content: 'x', complete_files: Array.from({ length: 11 }, () => ({ url: 'https://a.example/x', type: 'photo' })) } }],
    ['complete_files item not an object', { json: { content: 'x', complete_files: ['https://a.example'] } }],
    ['complete_files unknown type', { json: { content: 'x', complete_files: [{ url: 'https://a.example', type: 'gif' }] } }],
    ['complete_files url missing', { json: { content: 'x', complete_files: [{ type: 'photo' }] } }],
  ]);
  for (const [name, init] of cases) {
    const res = await call('POST', `/api/client/chats/${chatId}/messages`, { token, ...init });
    expect({ name, status: res.status }).toEqual({ name, status: 400 });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
  expect(await botItems(bot.id)).toEqual(before);
  // 10,000 characters exactly is fine.
  expect((await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'c'.repeat(10_000) } })).status).toBe(201);
});

test("a body over API Gateway's 10 MB request limit → 413 from the gateway, nothing written", async () => {
  const { token, bot, chatId } = await userWithChat();
  const before = await botItems(bot.id);
  const res = await call('POST', `/api/client/chats/${chatId}/messages`, {
    token,
    body: JSON.stringify({ content: 'c'.repeat(10 * 1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  expect(res.status).toBe(413);
  expect(res.body).toEqual({ message: 'Request Entity Too Large' });
  expect(await botItems(bot.id)).toEqual(before);
  // The gateway serves on after it: a body just within the contract's limit is refused by the handler as usual.
  expect((await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'c'.repeat(10_001) } })).status).toBe(400);
});

test('POST /session: bad bodies → 400 {error}', async () => {
  for (const [name, init] of bodyCases([])) {
    const res = await call('POST', '/api/client/session', init);
    expect({ name, status: res.status }).toEqual({ name, status: 400 });
    expect(res.body).toEqual({ error: expect.any(String) });
  }
});

test('hostile headers and paths never produce a 500', async () => {
  const { token, chatId } = await userWithChat();
  const hostile: Record<string, string>[] = [
    { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-16' },
    { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data' },
    { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=' + 'b'.repeat(300) },
    { authorization: `bearer ${token}`, origin: 'null' },
    { authorization: `Bearer ${token}`, 'x-forwarded-for': '1.1.1.1, 2.2.2.2', host: 'evil.example' },
    { authorization: `Bearer ${token} extra` },
    { authorization: `Bearer\t${token}` },
  ];
  const paths: [string, string][] = [
    ['POST', `/api/client/chats/${chatId}/messages`],
    ['POST', '/api/client/files'],
    ['POST', '/api/client/chats'],
    ['GET', `/api/client/chats/${chatId}/messages?limit=1&limit=2`],
    ['GET', `/api/client/chats/${encodeURIComponent('../' + chatId)}/messages`],
    ['GET', '/api/client/chats/%E0%A4%A/messages'],
  ];
  for (const headers of hostile) {
    for (const [method, path] of paths) {
      const res = await call(method, path, { headers, body: method === 'POST' ? '{"content":"x","name":"y"}' : undefined });
      expect({ path, status: res.status < 500 }).toEqual({ path, status: true });
      if (res.status >= 400) expect(res.body).toEqual({ error: expect.any(String) });
    }
  }
});
