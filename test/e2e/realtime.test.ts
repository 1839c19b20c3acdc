// Realtime with the real `centrifuge` client over the local WebSocket gateway: delivery, isolation,
// protocol errors, reconnects, gone connections.
import type { UnsubscribedContext } from 'centrifuge';
import { call, newSession, userWithChat } from '../support/api';
import { textMessage } from '../support/fixtures';
import { liveClientsClosedAfterEach, rawSocket, until } from '../support/realtime';
import { createMessage } from '../../lambdas/flows/send';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { dynamo, queryAll, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { channelSubscribers } from '../../lambdas/centrifuge/hub';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { handler as publisher } from '../../lambdas/realtime/publish';
import { marshall } from '@aws-sdk/util-dynamodb';
import { firstFileUrl, realtimeOf } from '../support/contract';

const live = liveClientsClosedAfterEach();

const send = (token: string, chatId: string, content: string) =>
  call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content } });




test('the session carries a realtime block; the client receives its own message once, with the HTTP id', async () => {
  const { session, token, chatId } = await userWithChat();
  const rt = realtimeOf(session);
  expect(rt).toEqual({
    provider: 'centrifugo',
    url: expect.stringMatching(/^ws:\/\/localhost:\d+\/\?token=[\w.-]+$/),
    token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    channel: `nexus:user#${session.user.id}`,
  });
  const a = await live(rt);
  const sent = await send(token, chatId, 'hello realtime');
  const pub = await a.waitFor((d) => d.type === 'message' && d.data.id === sent.body.id);
  expect(pub).toEqual({ type: 'message', data: sent.body });
  // A later message marks the end: the stream hands records on in order, and a socket's frames arrive in order.
  const next = await send(token, chatId, 'the next one');
  await a.waitFor((d) => d.data?.id === next.body.id);
  expect(a.publications.filter((d) => d.data.id === sent.body.id)).toHaveLength(1);
});

test('every connection of the user gets it (tabs, devices); another user does not', async () => {
  const { session, token, chatId, bot } = await userWithChat();
  const rt = realtimeOf(session);
  const [tab1, tab2] = [await live(rt), await live(rt)];
  const other = await newSession(bot.client_key);
  const stranger = await live(realtimeOf(other));
  const sent = await send(token, chatId, 'to both tabs');
  await tab1.waitFor((d) => d.data?.id === sent.body.id);
  await tab2.waitFor((d) => d.data?.id === sent.body.id);
  // A bot reply (outcoming) arrives the same way.
  const { item: reply } = await createMessage(textMessage({ userId: session.user.id, botId: bot.id, chatId }, 'bot says hi'));
  const pub = await tab1.waitFor((d) => d.data?.id === reply.id);
  expect(pub.data).toMatchObject({ sender_type: 'outcoming', sender: 'bot', content: 'bot says hi' });
  // The stranger's own message, written after, marks the end: the stream hands records on in order.
  const own = await call('POST', '/api/client/chats', { token: other.session_token, json: { name: 'own' } });
  const mine = await send(other.session_token, own.body.id, 'my own');
  await stranger.waitFor((d) => d.data?.id === mine.body.id);
  expect(stranger.publications.filter((d) => d.data?.chat_id !== own.body.id)).toEqual([]);
});

test('POST /read publishes a read action', async () => {
  const { session, token, chatId } = await userWithChat();
  const c = await live(realtimeOf(session));
  await call('POST', `/api/client/chats/${chatId}/read`, { token });
  expect(await c.waitFor((d) => d.type === 'action')).toEqual({ type: 'action', data: { action: 'read', chat_id: chatId } });
});

test('photo messages arrive with presigned file URLs that download', async () => {
  const { session, token, chatId } = await userWithChat();
  const c = await live(realtimeOf(session));
  const fd = new FormData();
  fd.append('file', new Blob([Buffer.from('PNGDATA')], { type: 'image/png' }), 'p.png');
  const file = await call('POST', '/api/client/files', { token, body: fd });
  const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: '', content_type: 'photo', files: [file.body.id] } });
  const pub = await c.waitFor((d) => d.data?.id === sent.body.id);
  expect(await (await fetch(firstFileUrl(pub.data))).text()).toBe('PNGDATA');
});

test('a socket subscribed is found by the next fan-out: the subscribers are read strongly consistent (AWS may lag otherwise; DynamoDB Local never does)', async () => {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  const c = await live(rt);
  const send = jest.spyOn(dynamo, 'send');
  try {
    expect(await channelSubscribers(rt.channel)).toEqual([c.clientId()]);
    const queries = send.mock.calls.map(([cmd]) => (cmd as QueryCommand).input).filter((i) => i.ExpressionAttributeValues?.[':pk'] === keys.subscribers(rt.channel));
    expect(queries.map((i) => i.ConsistentRead)).toEqual([true]);
  } finally {
    send.mockRestore();
    c.close();
  }
});

test('a bot turned off, or its client interface disabled, while a socket is open: nothing more is published to it, nor kept for recovery', async () => {
  const { session, chatId, bot } = await userWithChat();
  // Recoverable: the channel keeps a stream, whose history a closed interface's publication must stay out of.
  const c = await live(realtimeOf(session), { subscription: { recoverable: true } });
  const { item } = await createMessage(textMessage({ userId: session.user.id, botId: bot.id, chatId }, 'on'));
  await c.waitFor((d) => d.data?.id === item.id);
  // The publisher itself, on a stream record of a reply (not counted: the chat stays as it is).
  const publishReply = async (n: number) => {
    const id = String(BigInt(item.id) + BigInt(n));
    // Its sequence number above the stream's own (a record at or before the channel's last positioned one is a redelivery).
    const record = { eventName: 'INSERT', dynamodb: { SequenceNumber: `9${String(n).padStart(30, '0')}`, NewImage: marshall({ entity: 'message', ...item, id, count_in_chat: false }, { removeUndefinedValues: true }) } };
    // marshall's AttributeValue (the SDK's) and the stream event's (aws-lambda's) are the same JSON, typed apart.
    expect(await publisher({ Records: [record] } as unknown as DynamoDBStreamEvent)).toEqual({ batchItemFailures: [] });
    return id;
  };
  for (const [n, off] of [{ client_api_enabled: false }, { enabled: false }].entries()) {
    await updateBot(bot.id, off);
    const hidden = await publishReply(2 * n + 1);
    await updateBot(bot.id, { client_api_enabled: true, enabled: true });
    const shown = await publishReply(2 * n + 2);
    // The publisher posts before it returns, and one socket's frames arrive in order: with the later one here,
    // the earlier would be too.
    await c.waitFor((d) => d.data?.id === shown);
    // Nor kept for recovery: a socket that reconnects recovers nothing the closed interface held back.
    const history = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.channelHistoryPartition(realtimeOf(session).channel) }, ConsistentRead: true });
    const kept = (id: string) => history.some((h) => (h.data as { data: { id: string } }).data.id === id);
    expect({ off, published: c.publications.some((p) => p.data?.id === hidden), kept: kept(hidden), shownKept: kept(shown) }).toEqual({ off, published: false, kept: false, shownKept: true });
  }
});

test("another user's channel → 103; the connection stays usable", async () => {
  const { session, token, chatId, bot } = await userWithChat();
  const other = await newSession(bot.client_key);
  const c = await live(realtimeOf(session));
  const foreign = c.client.newSubscription(realtimeOf(other).channel);
  // The client unsubscribes with the server's code (103 is not a temporary error: no retry).
  const refused = new Promise<UnsubscribedContext>((resolve) => foreign.once('unsubscribed', resolve));
  foreign.subscribe();
  expect(await refused).toMatchObject({ code: 103 });
  const sent = await send(token, chatId, 'still here');
  await c.waitFor((d) => d.data?.id === sent.body.id);
  expect(c.client.state).toBe('connected');
});

test('protocol edge cases: subscribe before connect, unknown method, pong, junk lines, unsubscribe', async () => {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  const r = await rawSocket(rt.url);
  const [early] = await r.request(JSON.stringify({ id: 1, subscribe: { channel: rt.channel } }));
  expect(early).toEqual({ id: 1, error: { code: 101, message: expect.stringMatching(/connect first/) } });
  const replies = await r.request(
    [
      JSON.stringify({ id: 2, connect: { token: rt.token, name: 'js' } }),
      JSON.stringify({ id: 3, subscribe: { channel: rt.channel, flag: 1 } }),
      '{}',
      JSON.stringify({ id: 4, presence: { channel: rt.channel } }),
      'not json',
      JSON.stringify({ id: 5, unsubscribe: { channel: rt.channel } }),
      // A channel that is not a string, even one String() cannot convert: refused, the frame's other replies kept.
      JSON.stringify({ id: 7, subscribe: { channel: { toString: 1 } } }),
      JSON.stringify({ id: 8, subscribe: { channel: 42 } }),
    ].join('\n'),
  );
  expect(replies).toEqual([
    { id: 2, connect: { client: expect.any(String), version: expect.any(String), expires: true, ttl: expect.any(Number) } },
    { id: 3, subscribe: {} },
    { id: 4, error: { code: 104, message: expect.any(String) } },
    { error: { code: 107, message: expect.any(String) } },
    { id: 5, unsubscribe: {} },
    { id: 7, error: { code: 103, message: 'permission denied' } },
    { id: 8, error: { code: 103, message: 'permission denied' } },
  ]);
  // A later subscribe on its own (no connect in the frame) is checked against the bound user.
  const [again] = await r.request(JSON.stringify({ id: 6, subscribe: { channel: rt.channel } }));
  expect(again).toEqual({ id: 6, subscribe: {} });
  r.ws.close();
});

test('the server closes a socket → the client reconnects, resubscribes and gets the next message; catch-up with after=', async () => {
  const { session, token, chatId } = await userWithChat();
  const c = await live(realtimeOf(session));
  const first = await send(token, chatId, 'before the drop');
  await c.waitFor((d) => d.data?.id === first.body.id);
  const oldId = c.clientId();
  const resubscribed = new Promise<void>((resolve) => c.sub.once('subscribed', () => resolve()));
  // Close it the way API Gateway does (idle timeout, deploy): through the @connections API.
  const del = await fetch(`${process.env.WS_MANAGEMENT_ENDPOINT}/@connections/${encodeURIComponent(oldId)}`, { method: 'DELETE' });
  expect(del.status).toBe(204);
  // While it is away, a message is sent; after reconnecting the client catches up with after=<last id>.
  const missed = await send(token, chatId, 'while away');
  await resubscribed;
  expect(c.clientId()).not.toBe(oldId);
  const catchUp = await call('GET', `/api/client/chats/${chatId}/messages?after=${first.body.id}`, { token });
  expect(catchUp.body.map((m) => m.id)).toEqual([missed.body.id]);
  const next = await send(token, chatId, 'after the reconnect');
  await c.waitFor((d) => d.data?.id === next.body.id);
});

test('a post to a gone connection removes it and is not an error; live subscribers still get the message', async () => {
  const { session, token, chatId } = await userWithChat();
  const c = await live(realtimeOf(session));
  const channel = realtimeOf(session).channel;
  // A connection that vanished without $disconnect (best effort on API Gateway).
  const ghost = 'ghost-connection=';
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.connection(ghost), entity: 'connection', connection_id: ghost, user_id: session.user.id, connected: true } }));
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.subscription(channel, ghost), entity: 'subscription', connection_id: ghost } }));
  const sent = await send(token, chatId, 'fan-out with a ghost');
  await c.waitFor((d) => d.data?.id === sent.body.id);
  const gone = async () =>
    !(await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.subscription(channel, ghost), ConsistentRead: true }))).Item &&
    !(await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.connection(ghost), ConsistentRead: true }))).Item;
  await until(gone, 15_000, 'the ghost connection to be removed');
});

test('closing a socket removes its connection, its subscription and the user\'s reference to it ($disconnect)', async () => {
  const { session } = await userWithChat();
  const c = await live(realtimeOf(session));
  const id = c.clientId();
  const channel = realtimeOf(session).channel;
  expect((await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.subscription(channel, id) }))).Item).toBeDefined();
  c.close();
  await until(async () => !(await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.subscription(channel, id), ConsistentRead: true }))).Item, 15_000, '$disconnect');
  const conn = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.connection(id), ConsistentRead: true }));
  expect(conn.Item).toBeUndefined();
  const ref = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.connectionRef(session.user.id, id), ConsistentRead: true }));
  expect(ref.Item).toBeUndefined();
});
