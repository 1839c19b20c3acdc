// Realtime tokens with the real `centrifuge` client over the local WebSocket gateway: which token opens a socket,
// what an expired or bad one gets, how long a connection lasts, refreshes (realtime.test.ts: delivery and protocol).
import WebSocket from 'ws';
import { Centrifuge, type DisconnectedContext } from 'centrifuge';
import { readFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import { call, newSession, userWithChat } from '../support/api';
import { framesOf, liveClientsClosedAfterEach, rawSocket, until, type Frame } from '../support/realtime';
import { sleep, untilExpired } from '../support/wait';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';
import { withToken } from '../../lambdas/centrifuge/channels';
import { channelSubscribers } from '../../lambdas/centrifuge/hub';
import { realtimeOf } from '../support/contract';

const live = liveClientsClosedAfterEach();

const send = (token: string, chatId: string, content: string) =>
  call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content } });

const jwtKey = () => new TextEncoder().encode(readFileSync(process.env.JWT_SECRET_FILE as string, 'utf8').trim());
async function realtimeToken(userId: string, botId: string, exp: number) {
  return new SignJWT({ bot: botId })
    .setProtectedHeader({ alg: 'HS256', typ: 'nexus-realtime+jwt' })
    .setIssuer('nexus')
    .setAudience('nexus:realtime')
    .setSubject(userId)
    .setIssuedAt(Math.min(exp, Math.floor(Date.now() / 1000)) - 10)
    .setExpirationTime(exp)
    .sign(jwtKey());
}



test('token types do not mix: a realtime token is not a session token, nor the reverse', async () => {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  expect((await call('GET', '/api/client/chats', { token: rt.token })).status).toBe(401);
  const r = await rawSocket(rt.url);
  const [reply] = await r.request(JSON.stringify({ id: 1, connect: { token: session.session_token } }));
  expect(reply).toEqual({ id: 1, error: { code: 101, message: expect.any(String) } });
  r.ws.close();
  // And in the URL: the handshake itself is refused.
  const status = await handshakeStatus(withToken(rt.url, session.session_token));
  expect(status).toBe(401);
});

async function handshakeStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('error', () => undefined);
  });
}

test('the realtime URL carries the token; a missing, bad or expired one is refused before the socket opens', async () => {
  const { session, bot } = await userWithChat();
  const rt = realtimeOf(session);
  expect(new URL(rt.url).searchParams.get('token')).toBe(rt.token);
  const bare = new URL(rt.url);
  bare.search = '';
  const expired = await realtimeToken(session.user.id, bot.id, Math.floor(Date.now() / 1000) - 5);
  expect(await handshakeStatus(bare.href)).toBe(401);
  expect(await handshakeStatus(withToken(rt.url, 'garbage'))).toBe(401);
  expect(await handshakeStatus(withToken(rt.url, expired))).toBe(401);
  expect(await handshakeStatus(rt.url)).toBe(101);

  // Bound at $connect: a connect command for another user on that socket is refused.
  const other = await newSession(bot.client_key);
  const r = await rawSocket(rt.url);
  const [refused] = await r.request(JSON.stringify({ id: 1, connect: { token: realtimeOf(other).token } }));
  expect(refused.error?.code).toBe(101);
  const [ok] = await r.request(JSON.stringify({ id: 2, connect: { token: rt.token } }));
  expect(ok).toEqual({ id: 2, connect: { client: expect.any(String), version: expect.any(String), expires: true, ttl: expect.any(Number) } });
  r.ws.close();
});

test('$connect without a valid token answers 401 and writes no connection; with one, the connection is bound to its user', async () => {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  const { handler } = await import('../../lambdas/realtime/connect');
  const event = (connectionId: string, token?: string) => ({
    requestContext: { connectionId, routeKey: '$connect', eventType: 'CONNECT' as const, requestId: 'r' },
    ...(token !== undefined && { queryStringParameters: { token } }),
  });
  const stored = async (id: string) => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.connection(id), ConsistentRead: true }))).Item;
  for (const [id, token] of [[`none-${Date.now()}`, undefined], [`bad-${Date.now()}`, 'bad.token.here'], [`session-${Date.now()}`, session.session_token]]) {
    expect(await handler(event(id as string, token))).toMatchObject({ statusCode: 401 });
    expect(await stored(id as string)).toBeUndefined();
  }
  const good = `good-${Date.now()}`;
  expect(await handler(event(good, rt.token))).toEqual({ statusCode: 200 });
  expect(await stored(good)).toMatchObject({ user_id: session.user.id, connected: false });
});

test('bad token in connect → 101 and the client stops (no retry loop)', async () => {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  const client = new Centrifuge(rt.url, { token: 'bad.token.here', websocket: WebSocket as never, minReconnectDelay: 20, maxReconnectDelay: 50 });
  let connecting = 0;
  client.on('connecting', () => connecting++);
  const disconnected = new Promise<DisconnectedContext>((resolve) => client.once('disconnected', resolve));
  client.connect();
  const ctx = await disconnected;
  expect(ctx.code).toBe(101);
  await sleep(500); // nothing to await: a retry would come within maxReconnectDelay (50 ms), and none may
  expect(client.state).toBe('disconnected');
  expect(connecting).toBe(1);
});

test('expired token in connect → 109; the client fetches a new token with getToken and connects', async () => {
  const { session, bot } = await userWithChat();
  const rt = realtimeOf(session);
  const expired = await realtimeToken(session.user.id, bot.id, Math.floor(Date.now() / 1000) - 5);
  const r = await rawSocket(rt.url);
  const [reply] = await r.request(JSON.stringify({ id: 1, connect: { token: expired } }));
  expect(reply).toEqual({ id: 1, error: { code: 109, message: 'token expired' } });
  r.ws.close();

  let asked = 0;
  const c = await live({ ...rt, token: expired }, {
    getToken: () => {
      asked++;
      return Promise.resolve(rt.token);
    },
  });
  expect(asked).toBe(1);
  expect(c.client.state).toBe('connected');
});

test('a connection lasts as long as its token: connect says when (expires, ttl); a refresh with a new token of the same user extends it, another user\'s is refused', async () => {
  const { session, token, chatId, bot } = await userWithChat();
  const rt = realtimeOf(session);
  const userId = session.user.id;
  const r = await rawSocket(rt.url);
  const frames: Frame[] = [];
  r.ws.on('message', (d) => frames.push(...framesOf(d)));
  const exp = Math.floor(Date.now() / 1000) + 3;
  const soon = await realtimeToken(userId, bot.id, exp);
  const [connected, subscribed] = await r.request([JSON.stringify({ id: 1, connect: { token: soon } }), JSON.stringify({ id: 2, subscribe: { channel: rt.channel } })].join('\n'));
  // The refresh is asked for 30 s before the token expires (here, at once: 1 s).
  expect([connected.connect?.expires, connected.connect?.ttl, subscribed]).toEqual([true, 1, { id: 2, subscribe: {} }]);
  const other = await newSession(bot.client_key);
  const [refused] = await r.request(JSON.stringify({ id: 3, refresh: { token: realtimeOf(other).token } }));
  expect(refused).toEqual({ id: 3, error: { code: 101, message: expect.any(String) } });
  const [refreshed] = await r.request(JSON.stringify({ id: 4, refresh: { token: rt.token } }));
  expect(refreshed).toEqual({ id: 4, refresh: { client: connected.connect?.client, version: expect.any(String), expires: true, ttl: expect.any(Number) } });
  expect(refreshed.refresh?.ttl).toBeGreaterThan(3600);
  expect(refreshed.refresh?.ttl).toBeLessThanOrEqual(86400 - 30);
  // Past the first token's expiry the socket still gets the user's messages.
  await untilExpired(exp, 'the first token to expire');
  const sent = await send(token, chatId, 'after the refresh');
  await until(() => frames.some((f) => f.push?.pub?.data?.data?.id === sent.body.id), 15_000, 'the publication');
  r.ws.close();
});

test('a token that expires without a refresh: the socket is told (disconnect 3005, it reconnects with a new one) instead of getting the message, and unsubscribed; a subscribe meanwhile changes nothing', async () => {
  const { session, token, chatId, bot } = await userWithChat();
  const rt = realtimeOf(session);
  const r = await rawSocket(rt.url);
  const frames: Frame[] = [];
  r.ws.on('message', (d) => frames.push(...framesOf(d)));
  const exp = Math.floor(Date.now() / 1000) + 2;
  const soon = await realtimeToken(session.user.id, bot.id, exp);
  await r.request([JSON.stringify({ id: 1, connect: { token: soon } }), JSON.stringify({ id: 2, subscribe: { channel: rt.channel } })].join('\n'));
  await untilExpired(exp);
  // A later subscribe on that connection is taken (never a refusal the client would give up on); the next
  // publication still finds the token expired.
  const [again] = await r.request(JSON.stringify({ id: 3, subscribe: { channel: rt.channel } }));
  expect(again).toEqual({ id: 3, subscribe: {} });
  const sent = await send(token, chatId, 'not for an expired socket');
  await until(() => frames.some((f) => f.push?.disconnect), 15_000, 'the disconnect push');
  expect(frames.filter((f) => f.push?.disconnect)).toEqual([{ push: { disconnect: { code: 3005, reason: 'token expired' } } }]);
  expect(frames.some((f) => f.push?.pub?.data?.data?.id === sent.body.id)).toBe(false);
  // The publisher unsubscribes it after the push arrives: waited for, not read once.
  await until(async () => (await channelSubscribers(rt.channel)).length === 0, 15_000, 'the expired socket unsubscribed');
  r.ws.close();
});

test('the centrifuge client refreshes its token before it expires (getToken) and keeps receiving', async () => {
  const { session, token, chatId, bot } = await userWithChat();
  const rt = realtimeOf(session);
  const exp = Math.floor(Date.now() / 1000) + 2;
  const soon = await realtimeToken(session.user.id, bot.id, exp);
  let asked = 0;
  const c = await live({ ...rt, token: soon }, {
    getToken: () => {
      asked++;
      return Promise.resolve(rt.token);
    },
  });
  await until(() => asked > 0, 15_000, 'the client to ask for a new token');
  await untilExpired(exp, 'the first token to expire');
  const sent = await send(token, chatId, 'still live');
  await c.waitFor((d) => d.data?.id === sent.body.id);
  expect(c.client.state).toBe('connected');
});
