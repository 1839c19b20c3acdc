// Regressions of what contract-driven fuzzing found: free-form JSON DynamoDB cannot hold as a map, statuses
// the document does not list, and lengths counted in another unit than JSON Schema's. Each case is the example
// that found it; a refusal is a 400 naming the rule and writes nothing.
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { botItems, call, clientEndpoints, newBot, newSession, userWithChat } from '../support/api';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { present, type Schemas } from '../support/contract';

/** `{"a":{"a":…1…}}` with `levels` objects, the outermost included, as raw JSON text. */
const nested = (levels: number): string => '{"a":'.repeat(levels - 1) + '{"a":1}' + '}'.repeat(levels - 1);

/** Creates a chat from a raw JSON body: numbers such as 9007199254740993 must reach the server verbatim. */
const createChat = (token: string, body: string) =>
  call('POST', '/api/client/chats', { token, body, headers: { 'content-type': 'application/json' } });

let ctx: Awaited<ReturnType<typeof userWithChat>>;
beforeAll(async () => {
  ctx = await userWithChat();
});

describe('additional_info round-trips exactly (POST, GET /chats, the Bot API)', () => {
  test.each([
    ['-2.3e+214', '{"x":-2.3e+214}'],
    ['1e+127', '{"x":1e+127}'],
    ['1e308', '{"x":1e308}'],
    ['9007199254740993', '{"x":9007199254740993}'],
    ['1e-140', '{"x":1e-140}'],
    ['6.5e-63', '{"x":6.5e-63}'],
    ['1.5', '{"x":1.5}'],
    ['an empty key', '{"":1}'],
    ['keys with dots and #', '{"a.b":{"#c":["USER#x",{"d.e#":null}]},"$ref":true}'],
    ['unicode keys and an escaped lone surrogate', '{"ключ 🔑":"\\ud800","\\u0000":"nul"}'],
    ['32 levels (the limit)', nested(32)],
    ['an array 31 levels deep', `{"a":${'['.repeat(31)}${']'.repeat(31)}}`],
  ])('%s', async (_name, info) => {
    const expected = JSON.parse(info) as unknown;
    const created = await createChat(ctx.token, `{"name":"a","additional_info":${info}}`);
    expect(created.status).toBe(201);
    expect(created.body.additional_info).toEqual(expected);
    const listed = await call('GET', '/api/client/chats', { token: ctx.token });
    expect(present(listed.body.find((c) => c.id === created.body.id), 'the chat in the list').additional_info).toEqual(expected);
    const bot = await call('GET', '/api/bot/chats?limit=200', { headers: { authorization: `Bearer ${ctx.secretKey}` } });
    expect(present(bot.body.chats.find((c) => c.id === created.body.id), 'the chat in the bot’s list').additional_info).toEqual(expected);
  });
});

test.each([
  ['40 levels', nested(40), 'nested at most 32 levels'],
  ['1,000 levels', nested(1000), 'nested at most 32 levels'],
  ['5,000 levels', nested(5000), 'nested at most 32 levels'],
  ['arrays 5,000 levels deep', `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`, 'nested at most 32 levels'],
  ['a number beyond a double (1e400)', '{"x":1e400}', '1.7976931348623157e308'],
  ['over 8 KB', JSON.stringify({ blob: 'b'.repeat(8200) }), 'at most 8192 bytes'],
])('additional_info %s → 400 naming the limit (never a 5xx or Retry-After), nothing written', async (_name, info, rule) => {
  const before = await botItems(ctx.bot.id);
  const res = await createChat(ctx.token, `{"name":"a","additional_info":${info}}`);
  expect(res.status).toBe(400);
  expect(res.body.error).toContain('additional_info');
  expect(res.body.error).toContain(rule);
  expect(res.headers.get('retry-after')).toBeNull();
  expect(await botItems(ctx.bot.id)).toEqual(before);
});

test('lengths are counted in characters as JSON Schema counts them: 200 emoji fit a 200-character limit', async () => {
  const { bot } = await newBot();
  const emoji = (n: number) => '😀'.repeat(n);
  const session = await newSession(bot.client_key, { first_name: emoji(200), last_name: emoji(200) });
  expect(session.user.first_name).toBe(emoji(200));
  const chat = await call('POST', '/api/client/chats', { token: session.session_token, json: { name: emoji(200) } });
  expect(chat.status).toBe(201);
  const sent = await call('POST', `/api/client/chats/${chat.body.id}/messages`, { token: session.session_token, json: { content: emoji(10_000) } });
  expect(sent.status).toBe(201);
  expect(sent.body.content).toBe(emoji(10_000));

  const before = await botItems(bot.id);
  for (const [path, json] of [
    ['/api/client/chats', { name: emoji(201) }],
    [`/api/client/chats/${chat.body.id}/messages`, { content: emoji(10_001) }],
  ] as const) {
    const res = await call<Schemas['Error']>('POST', path, { token: session.session_token, json });
    expect([res.status, res.body.error]).toEqual([400, expect.stringContaining('characters')]);
  }
  const tooLong = await call('POST', '/api/client/session', { json: { client_key: bot.client_key, first_name: emoji(201) } });
  expect([tooLong.status, tooLong.body.error]).toEqual([400, 'first_name: must be at most 200 characters']);
  expect(await botItems(bot.id)).toEqual(before);
});

test('external_id: 255 four-byte characters fit the sort key; 256 of them are a 400 naming the byte limit', async () => {
  const { bot } = await newBot();
  const fits = await call('POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: '😀'.repeat(255) } });
  expect(fits.status).toBe(200);
  expect(fits.body.user.external_id).toBe('😀'.repeat(255));
  const ascii = await call('POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: 'e'.repeat(256) } });
  expect(ascii.status).toBe(200);
  const before = await botItems(bot.id);
  const over = await call('POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: '😀'.repeat(256) } });
  expect([over.status, over.body.error]).toEqual([400, 'external_id: must be at most 1020 bytes as UTF-8']);
  expect(await botItems(bot.id)).toEqual(before);
});

test('text with an unpaired surrogate is a 400 on every field that stores text, nothing written', async () => {
  const before = await botItems(ctx.bot.id);
  const lone = '"x\\ud800y"';
  const cases: [string, string, string][] = [
    ['/api/client/chats', `{"name":${lone}}`, 'name'],
    [`/api/client/chats/${ctx.chatId}/messages`, `{"content":${lone}}`, 'content'],
    ['/api/client/chats', `{"name":"a","image_url":"https://example.com/\\udfff"}`, 'image_url'],
  ];
  for (const [path, body, field] of cases) {
    const res = await call<Schemas['Error']>('POST', path, { token: ctx.token, body, headers: { 'content-type': 'application/json' } });
    expect([res.status, res.body.error]).toEqual([400, `${field}: must be well-formed Unicode (no unpaired surrogate)`]);
  }
  const session = await call('POST', '/api/client/session', {
    body: `{"client_key":"${ctx.bot.client_key}","external_id":${lone}}`,
    headers: { 'content-type': 'application/json' },
  });
  expect(session.status).toBe(400);
  expect(await botItems(ctx.bot.id)).toEqual(before);
});

test('a signed session token whose bot no longer exists is a 401 on every client route', async () => {
  const { bot, token, chatId } = await userWithChat();
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.bot(bot.id) }));
  for (const [method, path, json] of clientEndpoints(chatId)) {
    const res = await call<Schemas['Error']>(method, path, { token, json });
    expect([method, path, res.status, res.body.error]).toEqual([method, path, 401, 'The session token names a bot that no longer exists']);
  }
});

test('a cursor that is not base64url is a 400; a request line and headers over 10,240 bytes get the gateway\'s documented 431', async () => {
  const bot = { authorization: `Bearer ${ctx.secretKey}` };
  const odd = await call('GET', `/api/bot/chats?cursor=${encodeURIComponent('😀'.repeat(100))}`, { headers: bot });
  expect([odd.status, odd.body.error]).toEqual([400, 'Invalid cursor']);
  // 2,048 emoji were within the cursor's old length limit: a 24 KB URL.
  const huge = await call('GET', `/api/bot/chats?cursor=${encodeURIComponent('😀'.repeat(2048))}`, { headers: bot });
  expect([huge.status, huge.body]).toEqual([431, { message: 'Request Header Fields Too Large' }]);
});

test('a body over 10 MB on a path no route matches gets the gateway\'s documented 413', async () => {
  const res = await call('POST', '/api/client/chats//messages', { token: ctx.token, body: 'x'.repeat(10 * 1024 * 1024 + 1), headers: { 'content-type': 'application/json' } });
  expect([res.status, res.body]).toEqual([413, { message: 'Request Entity Too Large' }]);
});
