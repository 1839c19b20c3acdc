// The WebSocket routes (lib/routes.ts WS_ROUTES) and every command of the protocol (lambdas/centrifuge/protocol.ts
// COMMANDS), walked like the HTTP routes (scopes.test.ts): a command that carries a realtime token refuses an
// erased user's (101) and a bot turned off's (103); $connect refuses an erased user's token before the socket
// opens; a subscription to another user's channel is refused (103); a socket of an erased user is closed, and
// a command that still reaches its connection finds nothing to act for (101). Each refusal writes nothing.
import WebSocket from 'ws';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { WS_ROUTES } from '../../lib/routes';
import { declaredScope } from '../../lambdas/access/declarations';
import { COMMANDS } from '../../lambdas/centrifuge/protocol';
import { CODES } from '../../lambdas/centrifuge/errors';
import { handler as frameHandler } from '../../lambdas/realtime/default';
import { closeUserConnections } from '../../lambdas/centrifuge/hub';
import { botItems, newSession, userWithChat } from '../support/api';
import { framesOf, until, type Frame } from '../support/realtime';
import { realtimeOf } from '../support/contract';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { revokeUser } from '../../lambdas/policies/revocation';
import { dynamo, queryAll, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';

const sockets: WebSocket[] = [];
afterEach(() => sockets.splice(0).forEach((s) => s.close()));

/** A user with a realtime block, the same bot's other user (their channel), and a raw socket of the user's. */
async function world() {
  const me = await userWithChat();
  const rt = realtimeOf(me.session);
  const neighbour = await newSession(me.bot.client_key);
  return { me, rt, neighbourChannel: realtimeOf(neighbour).channel };
}
type World = Awaited<ReturnType<typeof world>>;

/** A raw socket: each request gets the reply frame of its command. */
async function open(url: string) {
  const ws = new WebSocket(url);
  sockets.push(ws);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let id = 0;
  return {
    ws,
    send: (cmd: Record<string, unknown>) =>
      new Promise<Frame>((resolve) => {
        // A text frame may carry several replies, one per line: the first answers this command.
        ws.once('message', (d) => resolve(framesOf(d)[0]));
        ws.send(JSON.stringify({ id: ++id, ...cmd }));
      }),
  };
}

const connectionOf = async (userId: string) =>
  (await queryAll({ KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)', ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':c': keys.connectionRefPrefix }, ConsistentRead: true }))[0]
    ?.connection_id as string;
const subscription = async (channel: string, connectionId: string) =>
  (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.subscription(channel, connectionId), ConsistentRead: true }))).Item;

const erase = (w: World) => revokeUser(w.me.userId);
const turnOff = (w: World) => updateBot(w.me.bot.id, { enabled: false }).then(() => undefined);
const disable = (w: World) => updateBot(w.me.bot.id, { client_api_enabled: false }).then(() => undefined);

test('every WebSocket route declares a scope; a command not walked here fails', () => {
  expect(WS_ROUTES.map((r) => [r.id, declaredScope(r)])).toEqual([
    ['ws_connect', 'realtime:handshake'],
    ['ws_default', 'realtime'],
    ['ws_disconnect', 'connection'],
  ]);
  expect(Object.keys(COMMANDS).sort()).toEqual(Object.keys(WALKED).sort());
});

test('$connect: an erased user\'s token is refused (401) before the socket opens, and nothing is written', async () => {
  const w = await world();
  await erase(w);
  const before = await botItems(w.me.bot.id);
  const ws = new WebSocket(w.rt.url);
  ws.on('error', () => undefined); // the refused handshake, asserted below
  const status = await new Promise<number>((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)));
  expect(status).toBe(401);
  expect(await connectionOf(w.me.userId)).toBeUndefined();
  expect(await botItems(w.me.bot.id)).toEqual(before);
});

/** Per command of the protocol: each refusal it owes, arranged on a socket open for the user (connected or not). */
const WALKED: Record<keyof typeof COMMANDS, [what: string, arrange: (w: World) => Promise<void>, code: number][]> = {
  connect: [
    ["an erased user's token", erase, CODES.unauthorized],
    ['a bot turned off', turnOff, CODES.permissionDenied],
    ['a bot whose client interface is disabled', disable, CODES.permissionDenied],
  ],
  refresh: [
    ["an erased user's token", erase, CODES.unauthorized],
    ['a bot turned off', turnOff, CODES.permissionDenied],
  ],
  subscribe: [["another user's channel", () => Promise.resolve(), CODES.permissionDenied]],
  unsubscribe: [],
};

describe.each(Object.entries(WALKED))('%s', (command, refusals) => {
  if (refusals.length === 0) {
    test('acts on the socket\'s own subscription only (another user\'s channel: nothing to delete)', async () => {
      const w = await world();
      const s = await open(w.rt.url);
      expect(await s.send({ connect: { token: w.rt.token } })).toMatchObject({ connect: expect.anything() });
      const conn = await connectionOf(w.me.userId);
      const before = await botItems(w.me.bot.id);
      expect(await s.send({ unsubscribe: { channel: w.neighbourChannel } })).toMatchObject({ unsubscribe: {} });
      expect(await botItems(w.me.bot.id)).toEqual(before);
      expect(await subscription(w.neighbourChannel, conn)).toBeUndefined();
    });
    return;
  }
  test.each(refusals)('%s', async (_what, arrange, code) => {
    const w = await world();
    const s = await open(w.rt.url);
    // Connected first where the command needs it (a refresh, a subscribe).
    if (command !== 'connect') expect(await s.send({ connect: { token: w.rt.token } })).toMatchObject({ connect: expect.anything() });
    await arrange(w);
    const conn = await connectionOf(w.me.userId);
    const before = await botItems(w.me.bot.id);
    const channel = command === 'subscribe' ? w.neighbourChannel : w.rt.channel;
    const args = command === 'subscribe' ? { channel } : { token: w.rt.token };
    const reply = await s.send({ [command]: args });
    expect(reply).toEqual({ id: 1 + Number(command !== 'connect'), error: { code, message: expect.any(String) } });
    expect(await botItems(w.me.bot.id)).toEqual(before);
    expect(await subscription(channel, conn)).toBeUndefined();
  });
});

test("an erased user's socket is closed; a command that still reaches its connection finds no user (101) and writes nothing", async () => {
  const w = await world();
  const s = await open(w.rt.url);
  expect(await s.send({ connect: { token: w.rt.token } })).toMatchObject({ connect: expect.anything() });
  const conn = await connectionOf(w.me.userId);
  let closed = false;
  s.ws.once('close', () => (closed = true));
  // What the Bot API's DELETE does at once: the tokens revoked, the sockets closed.
  await erase(w);
  await closeUserConnections(w.me.userId);
  await until(() => closed, 15_000, 'the socket closed');
  const before = await botItems(w.me.bot.id);
  for (const cmd of [{ subscribe: { channel: w.rt.channel } }, { refresh: { token: w.rt.token } }, { connect: { token: w.rt.token } }]) {
    const reply = await frameHandler({ requestContext: { connectionId: conn, routeKey: '$default' }, body: JSON.stringify({ id: 1, ...cmd }) });
    expect(JSON.parse(reply.body ?? '')).toEqual({ id: 1, error: { code: CODES.unauthorized, message: expect.any(String) } });
  }
  expect(await botItems(w.me.bot.id)).toEqual(before);
  expect(await subscription(w.rt.channel, conn)).toBeUndefined();
});
