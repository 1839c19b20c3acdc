// The webhook address rule: every private or special address form refused when the URL is set (naming the
// rule), and again at delivery against the address connected to; loopback only with the local stack's setting.
import { createServer, type Server } from 'node:net';
import { promises as dns } from 'node:dns';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, userWithChat } from '../support/api';
import { freePort } from '../support/ports';
import { jsonLines } from '../support/jsonl';
import { until } from '../support/realtime';
import { startReceiver, type Hit } from '../support/receiver';
import type { Schemas } from '../support/contract';
import type { DeadLetter } from '../../lib/local/dead-letters';
import { readBot } from '../../lambdas/entities/bots';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { deliver } from '../../lambdas/adapters/webhooks';
import { keys } from '../../lambdas/entities/keys';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { reloadConfig } from '../../lambdas/shared/config';
import { WEBHOOK_ADDRESS_RULE } from '../../lambdas/adapters/webhook-target';

/** A delivery the receiver got, read as the message.created event it must be (fails naming what came instead). */
function messageCreated(hit: Hit): Schemas['WebhookMessageCreated'] {
  if (hit.body.event !== 'message.created') throw new Error(`expected a message.created delivery, got ${hit.body.event}`);
  return hit.body;
}

/** A webhook's dead letter: the job, as far as these tests read it (its message, the refused URL and why). */
type WebhookDeadLetter = DeadLetter & { body: { message?: { id: string } } };

/**
 * A host name (not `localhost`, which the rule refuses by name) that this machine resolves to 127.0.0.1: the
 * machine's own name usually is one (/etc/hosts). None found is a failure naming what the test needs.
 */
async function loopbackName(): Promise<string> {
  for (const name of [hostname(), 'vm', 'ip6-localhost', 'localhost.localdomain']) {
    const found = await dns.lookup(name, { all: true }).catch(() => []);
    if (found.length > 0 && found.every((a) => a.address === '127.0.0.1')) return name;
  }
  throw new Error('this test needs a host name resolving to 127.0.0.1 only, e.g. the machine\'s own name in /etc/hosts');
}

/** Private, link-local, unique-local, metadata, CGNAT, multicast and reserved: refused with the setting on or off. */
const PRIVATE = [
  'http://169.254.169.254/latest/meta-data/',
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/',
  'https://172.16.5.4/',
  'https://192.168.1.10/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://[fe80::1]/',
  'https://0.0.0.0/',
  'https://[::]/',
  'https://100.64.0.1/',
  'https://100.100.100.200/',
  'https://224.0.0.251/',
  'https://[ff02::1]/',
  'https://255.255.255.255/',
  'https://240.0.0.1/',
  'https://0xa9fea9fe/', // 169.254.169.254 in hex
  'https://2852039166/', // 169.254.169.254 as one number
  'https://012.0.0.1/', // 10.0.0.1 in octal
  'https://[::ffff:169.254.169.254]/',
  'https://[::ffff:a00:1]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'https://[2002:a9fe:a9fe::]/',
];
/** Loopback in every spelling: refused unless the local stack's WEBHOOK_ALLOW_LOOPBACK is on. */
const LOOPBACK = [
  'http://localhost/',
  'https://localhost./',
  'https://app.localhost/',
  'http://127.0.0.1/',
  'https://127.1/',
  'http://0x7f000001/',
  'https://2130706433/',
  'https://0177.0.0.1/',
  'https://[::1]/',
  'https://[::ffff:127.0.0.1]/',
];

/** The test worker's functions' environment with the setting `on` or off (the local stack's default is on). */
function loopbackSetting(on: boolean): void {
  process.env.WEBHOOK_ALLOW_LOOPBACK = on ? 'on' : 'off';
  reloadConfig();
}
afterEach(() => loopbackSetting(true));

const servers: { close(): void }[] = [];
afterAll(() => servers.forEach((s) => s.close()));

async function refusal(botId: string, url: string): Promise<string> {
  return updateBot(botId, { webhook_url: url }).then(
    () => `accepted ${url}`,
    (err: Error) => err.message,
  );
}

test('every private, link-local, unique-local, metadata and reserved form is refused when set, naming the rule; the webhook stays as it was', async () => {
  const { bot } = await userWithChat();
  await updateBot(bot.id, { webhook_url: 'https://hooks.example/in' });
  for (const on of [true, false]) {
    loopbackSetting(on);
    for (const url of PRIVATE) {
      expect(await refusal(bot.id, url)).toMatch(new RegExp(`^webhook_url refused: ${WEBHOOK_ADDRESS_RULE} \\(.+ is an? .+ address\\)$`));
    }
  }
  expect(await refusal(bot.id, 'https://0xa9fea9fe/')).toContain('169.254.169.254 is a link-local (cloud metadata) address');
  expect(await refusal(bot.id, 'https://[fd00:ec2::254]/')).toContain('fd00:ec2::254 is a unique-local address');
  expect((await readBot(bot.id))?.webhook_url).toBe('https://hooks.example/in');
});

test('loopback in every spelling, a name resolving to it, and http: are refused with the setting off; with it on only loopback passes', async () => {
  const { bot } = await userWithChat();
  loopbackSetting(false);
  for (const url of LOOPBACK) expect(await refusal(bot.id, url)).toMatch(/^webhook_url refused: .+ is a loopback address\)$/);
  // A name at 127.0.0.1: checked by what it resolves to.
  const vm = await loopbackName();
  expect(await refusal(bot.id, `https://${vm}/hook`)).toBe(`webhook_url refused: ${WEBHOOK_ADDRESS_RULE} (${vm} resolves to 127.0.0.1, a loopback address)`);
  expect(await refusal(bot.id, 'http://hooks.example/in')).toBe(`webhook_url refused: ${WEBHOOK_ADDRESS_RULE} (http: is not https:)`);
  expect(await refusal(bot.id, 'https://user:pw@hooks.example/in')).toContain('it carries a user name or password');
  expect(await refusal(bot.id, 'https://hooks.example/in')).toBe('accepted https://hooks.example/in');

  loopbackSetting(true);
  for (const url of LOOPBACK) expect(await refusal(bot.id, url)).toBe(`accepted ${url}`);
  expect(await refusal(bot.id, `https://${vm}/hook`)).toBe(`accepted https://${vm}/hook`);
  // The setting lets http: reach loopback only: a public host still needs https:.
  expect(await refusal(bot.id, 'http://hooks.example/in')).toContain('http: is not https:');
});

/** A TCP listener on every interface that counts connections: anything the deliverer connects to shows here. */
async function tcpCounter(): Promise<{ port: number; connections: () => number }> {
  let n = 0;
  const server: Server = createServer((socket) => {
    n++;
    socket.destroy();
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '0.0.0.0', () => r()));
  servers.push({ close: () => server.close() });
  return { port, connections: () => n };
}

test('a delivery is checked against the address it connects to: a name that resolves to loopback is refused before connecting', async () => {
  const target = await tcpCounter();
  const event = { event: 'message.created' };
  const vm = await loopbackName();
  loopbackSetting(false);
  // The name passes the check as written (a name, https:), as a name whose DNS changed since it was set would.
  const refused = await deliver(`https://${vm}:${target.port}/hook`, 'whsec_x', 'id-1', event);
  expect(refused).toEqual({ ok: false, refused: true, reason: `${WEBHOOK_ADDRESS_RULE} (${vm} resolves to 127.0.0.1, a loopback address)` });
  expect(await deliver(`http://127.0.0.1:${target.port}/hook`, 'whsec_x', 'id-2', event)).toMatchObject({ refused: true, reason: expect.stringContaining('127.0.0.1 is a loopback address') });
  expect(await deliver(`http://${vm}:${target.port}/hook`, 'whsec_x', 'id-3', event)).toMatchObject({ refused: true, reason: expect.stringContaining('http: is not https:') });
  expect(target.connections()).toBe(0);
  // With the setting on the same URL does connect (the listener is no TLS server, so the POST itself fails).
  loopbackSetting(true);
  expect(await deliver(`https://${vm}:${target.port}/hook`, 'whsec_x', 'id-4', event)).toMatchObject({ ok: false });
  expect(target.connections()).toBe(1);
});

test('a stored URL that the rule refuses (set before the rule, or bypassing it) is never POSTed: dead-lettered at once, naming the rule, no retries', async () => {
  const hook = await startReceiver();
  servers.push(hook);
  const { bot, token, chatId } = await userWithChat();
  await updateBot(bot.id, { webhook_url: hook.url });
  const stored = 'http://169.254.169.254/latest/meta-data/iam/';
  await dynamo.send(new UpdateCommand({ TableName: tableName(), Key: keys.bot(bot.id), UpdateExpression: 'SET webhook_url = :u', ExpressionAttributeValues: { ':u': stored } }));
  const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'to the metadata service?' } });
  expect(sent.status).toBe(201);
  const file = join(process.env.DATA_DIR as string, 'dead-letter', 'webhooks_dlq.jsonl');
  const dead = () => jsonLines<WebhookDeadLetter>(file).filter((d) => d.body.message?.id === sent.body.id);
  await until(() => dead().length > 0, 10_000, 'the dead letter');
  expect(dead()[0].body).toMatchObject({
    attempt: 0,
    url: stored,
    reason: `${WEBHOOK_ADDRESS_RULE} (169.254.169.254 is a link-local (cloud metadata) address)`,
  });
  // Back to the receiver: the next message is delivered there, so the refused one had its chance to show up.
  await updateBot(bot.id, { webhook_url: hook.url });
  const next = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content: 'now to the bot' } });
  await until(() => hook.hits.length > 0, 10_000, 'the next webhook');
  expect(hook.hits.map((h) => messageCreated(h).message.id)).toEqual([next.body.id]);
  expect(dead()).toHaveLength(1);
});
