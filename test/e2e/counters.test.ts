// Unread counters and activity, moved by the stream after a send (no transaction): exact under concurrency, once
// per stream record, right when a read races a reply, and already visible when the socket has the publication.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, streamPassed, userWithChat } from '../support/api';
import { liveClient, until } from '../support/realtime';
import { countMessage, resetUnread, type CountedMessage } from '../../lambdas/entities/chat-activity';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { present, realtimeOf } from '../support/contract';
import type { ChatItem } from '../../lambdas/entities/chats';
import { config } from '../../lambdas/shared/config';

const bot = <M extends string, U extends string>(method: M, path: U, secretKey: string, json?: unknown) =>
  call(method, `/api/bot${path}` as const, { headers: { authorization: `Bearer ${secretKey}` }, json });
/** The chat's item as stored: its fields and its keys. */
const chatItem = async (userId: string, chatId: string) =>
  present((await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(userId, chatId), ConsistentRead: true }))).Item, `chat ${chatId}'s item`) as ChatItem & Partial<Record<'gsi1pk' | 'gsi1sk' | 'gsi2pk' | 'gsi2sk', string>>;

test('20 replies sent at once: once the socket has them all, unread_msg_by_user is 20 on both APIs; a read makes it 0', async () => {
  const { session, token, chatId, secretKey } = await userWithChat();
  const live = await liveClient(realtimeOf(session));
  try {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => bot('POST', `/chats/${chatId}/messages`, secretKey, { content: `r${i}` })));
    expect(replies.every((r) => r.status === 201)).toBe(true);
    const ids = new Set(replies.map((r) => r.body.id));
    await until(() => live.publications.filter((p) => p.type === 'message' && ids.has(p.data.id)).length >= 20, 10_000, '20 publications');
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(20);
    const listed = (await bot('GET', '/chats', secretKey)).body.chats.find((c) => c.id === chatId);
    expect(listed?.unread_msg_by_user).toBe(20);
    await call('POST', `/api/client/chats/${chatId}/read`, { token });
    await live.waitFor((p) => p.type === 'action' && p.data.action === 'read' && p.data.chat_id === chatId);
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(0);
    // Nothing counted late: once the stream is past a later message, it is still 0.
    await streamPassed(token, chatId);
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(0);
  } finally {
    live.close();
  }
});

test('a reply to the older of two chats: once the socket has it, that chat is first in the list, counted', async () => {
  const { session, token, chatId: older, secretKey } = await userWithChat();
  const newer = (await call('POST', '/api/client/chats', { token, json: { name: 'newer' } })).body.id;
  const live = await liveClient(realtimeOf(session));
  try {
    const reply = await bot('POST', `/chats/${older}/messages`, secretKey, { content: 'back to you' });
    await live.waitFor((p) => p.type === 'message' && p.data.id === reply.body.id);
    const list = (await call('GET', '/api/client/chats', { token })).body;
    expect(list.map((c) => [c.id, c.unread_msg_by_user])).toEqual([
      [older, 1],
      [newer, 0],
    ]);
    expect(list[0].updated_at).toBe(reply.body.created_at);
  } finally {
    live.close();
  }
});

test('a read racing replies: in the end the counter is exactly the replies sent after the read', async () => {
  const { session, token, chatId, secretKey, userId } = await userWithChat();
  const live = await liveClient(realtimeOf(session));
  try {
    const sends = Array.from({ length: 10 }, (_, i) => bot('POST', `/chats/${chatId}/messages`, secretKey, { content: `r${i}` }));
    const read = call('POST', `/api/client/chats/${chatId}/read`, { token });
    const replies = await Promise.all(sends);
    expect((await read).status).toBe(200);
    const ids = new Set(replies.map((r) => r.body.id));
    await until(() => live.publications.filter((p) => p.type === 'message' && ids.has(p.data.id)).length >= 10, 10_000, '10 publications');
    const chat = await chatItem(userId, chatId);
    const after = replies.filter((r) => !chat.last_read_at || r.body.created_at > chat.last_read_at).length;
    expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(after);
  } finally {
    live.close();
  }
});

/** A message of one chat as the stream hands it to countMessage: a reply unless said otherwise. */
const messageOf = (userId: string, botId: string, chatId: string) => (created_at: string, sender_type: CountedMessage['sender_type'] = 'outcoming'): CountedMessage => ({ user_id: userId, bot_id: botId, chat_id: chatId, created_at, sender_type });

test('countMessage: once per stream record, and a message older than the last read moves the activity only', async () => {
  const { token, chatId, userId, bot: b } = await userWithChat();
  const message = messageOf(userId, b.id, chatId);
  const unread = async () => (await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user;
  // Sequence numbers far above the stack's own (its stream counts from the start of this run); times after
  // the chat's creation (its first activity).
  const first = new Date(Date.parse((await chatItem(userId, chatId)).updated_at) + 1).toISOString();
  await countMessage(message(first), '9'.repeat(30) + '1');
  expect(await unread()).toBe(1);
  // The same record again (a redelivery): nothing moves.
  await countMessage(message(first), '9'.repeat(30) + '1');
  expect(await unread()).toBe(1);
  // Read, then a message written before the read reaches the stream: activity moves, the counter does not.
  await call('POST', `/api/client/chats/${chatId}/read`, { token });
  const readAt = (await chatItem(userId, chatId)).last_read_at as string;
  const early = new Date((Date.parse(first) + Date.parse(readAt)) / 2).toISOString();
  await countMessage(message(early), '9'.repeat(30) + '2');
  const chat = await chatItem(userId, chatId);
  expect([chat.unread_msg_by_user, chat.updated_at]).toEqual([0, early]);
  // A later message counts.
  const late = new Date(Date.parse(readAt) + 1000).toISOString();
  await countMessage(message(late), '9'.repeat(30) + '3');
  expect(await unread()).toBe(1);
  // An older sequence number (a record before the last counted one, replayed) changes nothing.
  await countMessage(message(new Date(Date.parse(readAt) + 2000).toISOString()), '9'.repeat(30) + '0');
  expect([(await chatItem(userId, chatId)).updated_at, await unread()]).toEqual([late, 1]);
});

test('countMessage: two sends counted in the other order than their times: both counted, the activity stays at the newer one', async () => {
  const { token, chatId, userId, bot: b } = await userWithChat();
  const message = messageOf(userId, b.id, chatId);
  const newer = new Date(Date.now() + 2000).toISOString();
  const older = new Date(Date.now() + 1000).toISOString();
  await countMessage(message(newer), '9'.repeat(30) + '1');
  await countMessage(message(older), '9'.repeat(30) + '2');
  const chat = await chatItem(userId, chatId);
  expect([chat.unread_msg_by_user, chat.updated_at, chat.gsi2pk, chat.gsi2sk]).toEqual([2, newer, ...Object.values(keys.chatActivity(b.id, newer, chatId, config().chatListShards))]);
  expect((await call('GET', '/api/client/chats', { token })).body[0]).toMatchObject({ id: chatId, updated_at: newer, unread_msg_by_user: 2 });
  // Read between the two times, then an older record still to count: neither counted nor moving the activity.
  await resetUnread(userId, chatId, 'user', chat.counted_seq, Date.parse(older) + 500);
  await countMessage(message(new Date(Date.parse(older) + 100).toISOString()), '9'.repeat(30) + '3');
  expect(await chatItem(userId, chatId)).toMatchObject({ unread_msg_by_user: 0, updated_at: newer, counted_seq: '0'.repeat(9) + '9'.repeat(30) + '3' });
});

test('a read beaten by a message counted between its look at the chat and its write does not lose it: the counter stays the messages after the stored last read', async () => {
  const { token, chatId, userId, bot: b } = await userWithChat();
  const message = messageOf(userId, b.id, chatId);
  const counted = async () => (await chatItem(userId, chatId)).counted_seq;
  // Unbeaten: the read takes the time it was given.
  const readAt = Date.now();
  expect(await resetUnread(userId, chatId, 'user', await counted(), readAt)).toBe(true);
  expect((await chatItem(userId, chatId)).last_read_at).toBe(new Date(readAt).toISOString());
  // A read looks at the chat and takes its time; a reply created after that time is counted before the
  // read's write lands (sequence numbers far above the stack's own).
  const seen = await counted();
  const lookedAt = Date.now();
  const reply = new Date(lookedAt + 500).toISOString();
  await countMessage(message(reply), '9'.repeat(30) + '5');
  expect((await chatItem(userId, chatId)).unread_msg_by_user).toBe(1);
  // The write finds something counted since its look: it is taken again, after the reply, which it reads.
  expect(await resetUnread(userId, chatId, 'user', seen, lookedAt)).toBe(true);
  let chat = await chatItem(userId, chatId);
  expect([chat.unread_msg_by_user, present(chat.last_read_at, 'last_read_at') > reply]).toEqual([0, true]);
  // A reply after that read counts, as always.
  await countMessage(message(new Date(Date.parse(present(chat.last_read_at, 'last_read_at')) + 1000).toISOString()), '9'.repeat(30) + '6');
  expect((await call('GET', '/api/client/chats', { token })).body[0].unread_msg_by_user).toBe(1);
  // The operator's side the same way.
  const opSeen = await counted();
  const opLooked = Date.now();
  const ask = new Date(opLooked + 500).toISOString();
  await countMessage(message(ask, 'incoming'), '9'.repeat(30) + '7');
  expect(await resetUnread(userId, chatId, 'operator', opSeen, opLooked)).toBe(true);
  chat = await chatItem(userId, chatId);
  expect([chat.unread_msg_by_operator, present(chat.operator_last_read_at, 'operator_last_read_at') > ask, chat.unread_msg_by_user]).toEqual([0, true, 1]);
  // A chat that is gone: false (the handlers answer 404 or 403).
  expect(await resetUnread(userId, '00000000-0000-4000-8000-000000000000', 'user', undefined)).toBe(false);
});

test('a message counted in a chat still in the legacy list (gsi1) moves it to its shard of the chat list (gsi2)', async () => {
  const { chatId, userId, bot: b } = await userWithChat();
  const created = (await chatItem(userId, chatId)).created_at;
  // The chat as a chat made before the list was sharded is stored: listed in the bot's one gsi1 partition.
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.chat(userId, chatId),
      UpdateExpression: 'SET gsi1pk = :p, gsi1sk = :s REMOVE gsi2pk, gsi2sk',
      ExpressionAttributeValues: { ':p': keys.legacyBotChats(b.id), ':s': keys.activityAt(created, chatId) },
    }),
  );
  const at = new Date(Date.now() + 1000).toISOString();
  await countMessage(messageOf(userId, b.id, chatId)(at), '9'.repeat(30) + '1');
  const chat = await chatItem(userId, chatId);
  expect([chat.gsi1pk, chat.gsi1sk, chat.gsi2pk, chat.gsi2sk]).toEqual([undefined, undefined, ...Object.values(keys.chatActivity(b.id, at, chatId, config().chatListShards))]);
});
