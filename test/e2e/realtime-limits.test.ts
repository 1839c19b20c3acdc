// Realtime limits: oversized frames are refused without work, frames past API Gateway's 128 KB close the
// socket with 1009 (the client does not reconnect blindly), the largest message the API accepts still fits in
// one publication; a user's sockets past MAX_SOCKETS_PER_USER and a socket's command flood are closed with
// their Centrifuge codes.
import WebSocket from 'ws';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { call, startOfRateWindow, userWithChat } from '../support/api';
import { liveClient, textOf, until, type Frame, type LiveClient } from '../support/realtime';
import { sleep } from '../support/wait';
import { dynamo, queryAll, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { channelSubscribers } from '../../lambdas/centrifuge/hub';
import { config } from '../../lambdas/shared/config';
import { realtimeOf } from '../support/contract';
import type { DisconnectedContext } from 'centrifuge';


test('a frame over 16 KB gets a bad-request error and nothing else; over 128 KB the socket closes with 1009', async () => {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  const ws = new WebSocket(rt.url);
  await new Promise((r) => ws.once('open', r));
  const reply = new Promise<string>((r) => ws.once('message', (d) => r(textOf(d))));
  ws.send(JSON.stringify({ id: 1, connect: { token: rt.token, pad: 'x'.repeat(17 * 1024) } }));
  expect(JSON.parse(await reply)).toEqual({ error: { code: 107, message: expect.stringMatching(/at most 16384 bytes/) } });
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  ws.send('x'.repeat(129 * 1024));
  expect(await closed).toBe(1009);
});

test('the largest message the API accepts still fits in one publication (API Gateway: 128 KB)', async () => {
  const { session, token, chatId } = await userWithChat();
  const live = await liveClient(realtimeOf(session));
  try {
    // Worst case for JSON size: control characters escape to six bytes each; ten long links.
    const content = '\u0001'.repeat(10_000);
    const complete_files = Array.from({ length: 10 }, (_, i) => ({ url: `https://cdn.example/${String(i).padEnd(2000, '\u00e9')}`, type: 'document' }));
    const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content, complete_files } });
    expect(sent.status).toBe(201);
    const pub = await live.waitFor((d) => d.data?.id === sent.body.id);
    expect(pub.data.content).toBe(content);
    expect(Buffer.byteLength(JSON.stringify(pub))).toBeLessThan(128 * 1024);
  } finally {
    live.close();
  }
});

/** The user's socket references (written at $connect; what MAX_SOCKETS_PER_USER counts). */
async function socketRefs(userId: string): Promise<string[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :conn)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':conn': keys.connectionRefPrefix },
    ConsistentRead: true,
  });
  return items.map((i) => i.connection_id as string);
}

/** A raw socket that keeps every frame it gets, and its close. */
async function rawSocket(url: string) {
  const ws = new WebSocket(url);
  const frames: Frame[] = [];
  ws.on('message', (d) => frames.push(...textOf(d).split('\n').map((l) => JSON.parse(l) as Frame)));
  let isClosed = false;
  ws.once('close', () => (isClosed = true));
  await new Promise((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  return { ws, frames, closed: () => until(() => isClosed, 15_000, 'the socket closed') };
}

describe('per-user sockets and per-socket commands', () => {
  const clients: LiveClient[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  const cap = () => config().limits.socketsPerUser;

  test('past MAX_SOCKETS_PER_USER the oldest socket gets Disconnect 3504 and stays closed; a message reaches the open ones once each', async () => {
    expect(cap()).toBe(10);
    const { session, token, chatId } = await userWithChat();
    const rt = realtimeOf(session);
    const userId = session.user.id;
    for (let i = 0; i < cap(); i++) clients.push(await liveClient(rt));
    const [oldest] = clients;
    const oldestId = oldest.clientId();
    let reconnects = 0;
    oldest.client.on('connecting', () => reconnects++);
    let disconnected: DisconnectedContext | undefined;
    oldest.client.once('disconnected', (ctx) => (disconnected = ctx));
    clients.push(await liveClient(rt));
    await until(() => disconnected !== undefined, 15_000, 'the oldest disconnected');
    expect(disconnected).toMatchObject({ code: 3504, reason: 'connection limit' });
    // Its records are gone: the user has 10 sockets, the channel 10 subscribers.
    await until(async () => (await socketRefs(userId)).length === cap(), 15_000, 'the oldest socket forgotten');
    expect((await socketRefs(userId)).sort()).toEqual(clients.slice(1).map((c) => c.clientId()).sort());
    expect((await channelSubscribers(rt.channel)).sort()).toEqual(clients.slice(1).map((c) => c.clientId()).sort());
    const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'to the ten open tabs' } });
    for (const c of clients.slice(1)) await c.waitFor((d) => d.data?.id === sent.body.id);
    // A reconnect would come within the client's maxReconnectDelay (200 ms): it stays disconnected (3504 is terminal).
    await sleep(400); // none may come, and nothing marks when one would have
    expect({ state: oldest.client.state, reconnects, got: oldest.publications.some((d) => d.data?.id === sent.body.id) }).toEqual({ state: 'disconnected', reconnects: 0, got: false });
    expect(clients.slice(1).map((c) => c.publications.filter((d) => d.data?.id === sent.body.id).length)).toEqual(Array(cap()).fill(1));
    expect(await socketRefs(userId)).not.toContain(oldestId);
  });

  test('raw sockets past the cap: the oldest gets the push {code: 3504} and is closed, opened or connected', async () => {
    const { session } = await userWithChat();
    const rt = realtimeOf(session);
    // An opened socket that never sends connect counts too (it holds a socket of API Gateway's).
    const idle = await rawSocket(rt.url);
    const rest = [];
    for (let i = 1; i < cap(); i++) {
      const s = await rawSocket(rt.url);
      s.ws.send([JSON.stringify({ id: 1, connect: { token: rt.token } }), JSON.stringify({ id: 2, subscribe: { channel: rt.channel } })].join('\n'));
      await until(() => s.frames.length === 2, 15_000, 'connect and subscribe');
      rest.push(s);
    }
    const newest = await rawSocket(rt.url);
    newest.ws.send(JSON.stringify({ id: 1, connect: { token: rt.token } }));
    await idle.closed();
    expect(idle.frames).toEqual([{ push: { disconnect: { code: 3504, reason: 'connection limit' } } }]);
    await until(() => newest.frames.length === 1, 15_000, 'the newest connected');
    expect(newest.frames[0]).toMatchObject({ id: 1, connect: { client: expect.any(String) } });
    for (const s of [...rest, newest]) s.ws.close();
  });

  test('records of sockets that died without $disconnect never lock the user out: the oldest go first, and a publication removes the rest', async () => {
    const { session, token, chatId } = await userWithChat();
    const rt = realtimeOf(session);
    const userId = session.user.id;
    // A full set of sockets that died without $disconnect (their records stay 2 hours by TTL).
    const ghosts = Array.from({ length: cap() }, (_, i) => `ghost-${i}-${userId}`);
    const long = new Date(Date.now() - 3600_000).toISOString();
    for (const id of ghosts) {
      await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.connection(id), entity: 'connection', connection_id: id, user_id: userId, connected: true, created_at: long } }));
      await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.connectionRef(userId, id), entity: 'connection_ref', connection_id: id, created_at: long } }));
      await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.subscription(rt.channel, id), entity: 'subscription', connection_id: id } }));
    }
    const c = await liveClient(rt);
    clients.push(c);
    expect(await socketRefs(userId)).toHaveLength(cap());
    const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'past the ghosts' } });
    await c.waitFor((d) => d.data?.id === sent.body.id);
    // The publisher deletes a gone socket's reference and its subscription as separate writes: wait for both.
    await until(async () => (await socketRefs(userId)).length === 1, 15_000, 'the ghosts removed');
    await until(async () => (await channelSubscribers(rt.channel)).length === 1, 15_000, 'the ghosts unsubscribed');
    expect(await channelSubscribers(rt.channel)).toEqual([c.clientId()]);
  });

  test('a message goes to at most MAX_SOCKETS_PER_USER sockets: past them the oldest subscribed gets 3504 instead and is unsubscribed', async () => {
    const { session, token, chatId } = await userWithChat();
    const rt = realtimeOf(session);
    const c = await liveClient(rt);
    clients.push(c);
    let disconnected: DisconnectedContext | undefined;
    c.client.once('disconnected', (ctx) => (disconnected = ctx));
    // Subscriptions newer than the client's, as sockets that connected at the same moment would leave until
    // the last of them has closed the oldest (their sockets are gone: their posts find 410 and remove them).
    const later = Math.floor(Date.now() / 1000) + 3 * 3600;
    for (let i = 0; i < cap(); i++) {
      const id = `newer-${i}-${session.user.id}`;
      await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.subscription(rt.channel, id), entity: 'subscription', connection_id: id, ttl: later } }));
    }
    const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'to ten sockets at most' } });
    await until(() => disconnected !== undefined, 15_000, 'the 3504 push');
    expect(disconnected).toMatchObject({ code: 3504, reason: 'connection limit' });
    expect(c.publications.some((d) => d.data?.id === sent.body.id)).toBe(false);
    await until(async () => (await channelSubscribers(rt.channel)).length === 0, 15_000, 'the channel emptied');
  });

  test('a command flood gets Disconnect 3013 and the socket is closed; the frame past the budget is not run', async () => {
    const { session } = await userWithChat();
    const rt = realtimeOf(session);
    const perMinute = config().limits.socketCommandsPerMinute;
    expect(perMinute).toBe(30);
    // The budget is a fixed one-minute window: start well inside one, so the flood does not straddle two.
    await startOfRateWindow(45);
    const s = await rawSocket(rt.url);
    s.ws.send([JSON.stringify({ id: 1, connect: { token: rt.token } }), JSON.stringify({ id: 2, subscribe: { channel: rt.channel } })].join('\n'));
    await until(() => s.frames.length === 2, 15_000, 'connect and subscribe');
    // Frames of 14 commands: 2 + 14 + 14 = 30 fit the minute's budget, the next frame does not.
    const frame = (from: number) => Array.from({ length: 14 }, (_, i) => JSON.stringify({ id: from + i, unsubscribe: { channel: rt.channel } })).join('\n');
    s.ws.send(frame(3));
    s.ws.send(frame(17));
    s.ws.send(frame(31));
    await s.closed();
    expect(s.frames.filter((f) => f.unsubscribe).map((f) => f.id)).toEqual(Array.from({ length: 28 }, (_, i) => i + 3));
    expect(s.frames.slice(30)).toEqual([{ push: { disconnect: { code: 3013, reason: 'too many requests' } } }]);
    await until(async () => (await socketRefs(session.user.id)).length === 0, 15_000, 'the socket forgotten');
  });

  test('normal use stays within the limits: reconnects leave no records behind, and the client refreshes and resubscribes', async () => {
    const { session, token, chatId } = await userWithChat();
    const rt = realtimeOf(session);
    const c = await liveClient(rt);
    clients.push(c);
    // More reconnects than the cap: each closed socket's $disconnect removes its reference.
    for (let i = 0; i <= cap(); i++) {
      const id = c.clientId();
      const resubscribed = new Promise<void>((r) => c.sub.once('subscribed', () => r()));
      await fetch(`${process.env.WS_MANAGEMENT_ENDPOINT}/@connections/${encodeURIComponent(id)}`, { method: 'DELETE' });
      await resubscribed;
      await until(async () => (await socketRefs(session.user.id)).length === 1, 15_000, 'one socket reference');
    }
    const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'after the reconnects' } });
    await c.waitFor((d) => d.data?.id === sent.body.id);
    expect(c.client.state).toBe('connected');
  });
});
