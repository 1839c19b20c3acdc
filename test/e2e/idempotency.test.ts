// Idempotent sends: client_message_id (or Idempotency-Key) makes a retried send return the first message.
import { botItems, call, streamPassed, userWithChat } from '../support/api';
import { until } from '../support/realtime';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';

const post = (token: string, chatId: string, json: unknown, headers: Record<string, string> = {}) =>
  call('POST', `/api/client/chats/${chatId}/messages`, { token, json, headers });

test('a retry with the same client_message_id returns the first message (200) and writes nothing new', async () => {
  const { token, chatId, bot } = await userWithChat();
  const first = await post(token, chatId, { content: 'pay invoice 42', client_message_id: 'tap-1' });
  expect(first.status).toBe(201);
  const before = await botItems(bot.id);
  const retry = await post(token, chatId, { content: 'pay invoice 42', client_message_id: 'tap-1' });
  expect(retry.status).toBe(200);
  expect(retry.body).toEqual(first.body);
  expect(await botItems(bot.id)).toEqual(before);
  const history = await call('GET', `/api/client/chats/${chatId}/messages`, { token });
  expect(history.body.map((m) => m.id)).toEqual([first.body.id]);
  // The key is kept for a day, then expires by TTL.
  const key = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.idempotency(chatId, 'user', 'tap-1') }));
  expect(key.Item?.ttl - Date.now() / 1000).toBeGreaterThan(23 * 3600);
});

test('the Idempotency-Key header works the same; the same key with another message is a 409', async () => {
  const { token, chatId, bot } = await userWithChat();
  const first = await post(token, chatId, { content: 'hello' }, { 'idempotency-key': 'k-1' });
  expect(first.status).toBe(201);
  expect((await post(token, chatId, { content: 'hello', client_message_id: 'k-1' })).body.id).toBe(first.body.id);
  const before = await botItems(bot.id);
  const clash = await post(token, chatId, { content: 'something else' }, { 'idempotency-key': 'k-1' });
  expect(clash).toMatchObject({ status: 409, body: { error: expect.stringMatching(/idempotency key/i) } });
  expect(await botItems(bot.id)).toEqual(before);
  // Another chat, another scope: the same key makes a new message there.
  const other = await call('POST', '/api/client/chats', { token, json: { name: 'two' } });
  expect((await post(token, other.body.id, { content: 'hello' }, { 'idempotency-key': 'k-1' })).status).toBe(201);
});

test('a key past its 24 h is free again, even while its claim is still stored (TTL deletes late): a new message, 201', async () => {
  const { token, chatId } = await userWithChat();
  const first = await post(token, chatId, { content: 'hello', client_message_id: 'old-1' });
  expect(first.status).toBe(201);
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.idempotency(chatId, 'user', 'old-1'),
      UpdateExpression: 'SET #ttl = :past',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':past': Math.floor(Date.now() / 1000) - 1 },
    }),
  );
  const again = await post(token, chatId, { content: 'another day', client_message_id: 'old-1' });
  expect(again.status).toBe(201);
  expect(again.body.id).not.toBe(first.body.id);
  // The key now stands for the new message.
  expect(await post(token, chatId, { content: 'another day', client_message_id: 'old-1' })).toMatchObject({ status: 200, body: { id: again.body.id } });
});

test('concurrent identical sends make exactly one message', async () => {
  const { token, chatId } = await userWithChat();
  const replies = await Promise.all(Array.from({ length: 6 }, () => post(token, chatId, { content: 'double tap', client_message_id: 'race' })));
  expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
  expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
  expect(replies.filter((r) => r.status === 200)).toHaveLength(5);
  expect((await call('GET', `/api/client/chats/${chatId}/messages`, { token })).body).toHaveLength(1);
});

test('the Bot API is idempotent too, in its own scope', async () => {
  const { token, chatId, secretKey } = await userWithChat();
  const auth = { authorization: `Bearer ${secretKey}` };
  const a = await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: auth, json: { content: 'reply', client_message_id: 'job-9' } });
  const b = await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: auth, json: { content: 'reply', client_message_id: 'job-9' } });
  expect([a.status, b.status]).toEqual([201, 200]);
  expect(b.body.id).toBe(a.body.id);
  // The user side's key space is separate.
  expect((await post(token, chatId, { content: 'reply', client_message_id: 'job-9' })).status).toBe(201);
  // The reply counted once (by the stream, a moment after the send), the replay not at all.
  const unread = async () => (await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user;
  await until(async () => (await unread()) === 1, 5000, 'the reply counted');
  await streamPassed(token, chatId);
  expect(await unread()).toBe(1);
});

test('a key with spaces inside is printable ASCII: taken in the body and the header alike', async () => {
  const { token, chatId } = await userWithChat();
  const first = await post(token, chatId, { content: 'hi', client_message_id: 'order 42 / tap 1' });
  expect(first.status).toBe(201);
  const again = await post(token, chatId, { content: 'hi' }, { 'idempotency-key': 'order 42 / tap 1' });
  expect(again).toMatchObject({ status: 200, body: { id: first.body.id } });
});

test('malformed keys → 400', async () => {
  const { token, chatId } = await userWithChat();
  for (const [json, headers] of [
    [{ content: 'x', client_message_id: '' }, {}],
    [{ content: 'x', client_message_id: 'a'.repeat(129) }, {}],
    [{ content: 'x', client_message_id: ' padded' }, {}],
    [{ content: 'x', client_message_id: 'padded ' }, {}],
    [{ content: 'x', client_message_id: 7 }, {}],
    [{ content: 'x' }, { 'idempotency-key': 'cl\u00e9' }],
    [{ content: 'x', client_message_id: 'a' }, { 'idempotency-key': 'b' }],
  ] as const) {
    const res = await post(token, chatId, json, headers);
    expect({ json, status: res.status }).toEqual({ json, status: 400 });
  }
});
