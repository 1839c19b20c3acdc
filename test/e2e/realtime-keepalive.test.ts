// The page's keepalive (packages/client/src/keepalive.ts) with the real centrifuge client: on a gateway that closes sockets idle
// for 3 s (API Gateway: 10 minutes), a client sending it stays open past two idle timeouts without
// reconnecting, and its keepalives write nothing (its socket's rate window counts only its connect and subscribe);
// a client without it is closed. Its own stack, for the short idle timeout.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { Centrifuge } from 'centrifuge';
import { stackEnv, startOwnStack, type LocalProcess } from '../support/local-process';
import { call } from '../support/http';
import { until } from '../support/wait';
import { keepAlive } from '../../packages/client/src/keepalive';
import type { RealtimeBlock, Session } from '../support/contract';
import type { DemoBot } from '../../lib/local/stack';

// A keepalive every 300 ms against a 3 s idle timeout: a timer late by over 2.5 s on a loaded machine would be
// needed to close the kept socket.
const IDLE_MS = 3000;
const KEEPALIVE_MS = 300;
let stack: LocalProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-keepalive-'));
  // Every keepalive goes free here (0; on AWS at most one a minute per socket, and the page sends one every 9):
  // on a loaded machine two of them can reach the server within any shorter bound. The bound itself is
  // in test/unit/keepalive-bound.test.ts.
  const env = await stackEnv(dir, { ECHO_BOT: 'off', LOCAL_WS_IDLE_MS: String(IDLE_MS), SOCKET_KEEPALIVE_FREE_EVERY_MS: '0' });
  stack = await startOwnStack(env);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A connected, subscribed centrifuge client; with `keepaliveMs`, the page's keepalive on it. */
async function open(rt: RealtimeBlock, keepaliveMs?: number) {
  const client = new Centrifuge(rt.url, { token: rt.token, websocket: WebSocket as never, minReconnectDelay: 50, maxReconnectDelay: 200 });
  const seen = { ids: [] as string[], connecting: 0, keepalives: 0 };
  const send = client.send.bind(client);
  client.send = (data) => {
    seen.keepalives++;
    return send(data);
  };
  if (keepaliveMs) keepAlive(client, keepaliveMs);
  client.on('connected', (ctx) => seen.ids.push(ctx.client));
  client.on('connecting', () => seen.connecting++);
  const sub = client.newSubscription(rt.channel);
  const subscribed = new Promise<void>((r) => sub.once('subscribed', () => r()));
  sub.subscribe();
  client.connect();
  await subscribed;
  return { client, seen };
}

/** Commands counted in the socket's rate windows: one write per metered frame (lambdas/centrifuge/limits.ts). */
async function metered(connectionId: string): Promise<number> {
  const { queryAll } = await import('../../lambdas/aws/dynamo');
  const { keys } = await import('../../lambdas/entities/keys');
  const windows = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.ratePartition('socket_commands', connectionId) }, ConsistentRead: true });
  return windows.reduce((sum, w) => sum + Number(w.n), 0);
}

test('a socket with the keepalive stays open past two idle timeouts, writing nothing for it; one without is closed', async () => {
  const { client_key } = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot;
  const session = await call<Session>('POST', '/api/client/session', { base: stack.apiUrl, json: { client_key } });
  const rt = session.body.realtime as RealtimeBlock;
  const kept = await open(rt, KEEPALIVE_MS);
  const idle = await open(rt);
  try {
    const [id] = kept.seen.ids;
    const before = await metered(id);
    expect(before).toBeGreaterThan(0); // its connect and subscribe
    // Without a keepalive: closed once idle (the client then reconnects, as a page did every 10 minutes).
    await until(() => idle.seen.ids.length >= 2, 10_000, 'the idle socket to be closed and reopened');
    // With one: still the first connection after keepalives spanning two idle timeouts.
    await until(() => kept.seen.keepalives * KEEPALIVE_MS >= 2 * IDLE_MS, 15_000, 'keepalives over two idle timeouts');
    expect(kept.seen).toMatchObject({ ids: [id], connecting: 1 }); // the one connecting of its first connect
    expect(kept.client.state).toBe('connected');
    expect(await metered(id)).toBe(before);
  } finally {
    kept.client.disconnect();
    idle.client.disconnect();
  }
});
