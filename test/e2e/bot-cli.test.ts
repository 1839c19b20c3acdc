// `npm run bot -- ...` against the running local stack: create, update, list, JSON output, clear errors.
// The first test runs the CLI as `npm run bot` does (tsx, about half a second of CPU per run); the rest run
// the same source bundled once by esbuild (a tenth of that), since this file makes some forty runs.
jest.setTimeout(90_000);

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { ROOT } from '../support/local-process';
import { freePort } from '../support/ports';
import { call } from '../support/api';
import { present } from '../support/contract';
import type { BotView } from '../../bin/bot';

// Two folders below the root, as lib/local/settings.ts is (it finds the root from its own place, bundled or not);
// packages stay in node_modules, as under tsx.
const BUNDLE = join(ROOT, 'test-output', 'cli', `bot-${process.pid}.js`);
const TSX = [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bin', 'bot.ts')];

beforeAll(() => {
  mkdirSync(join(ROOT, 'test-output', 'cli'), { recursive: true });
  buildSync({ entryPoints: [join(ROOT, 'bin', 'bot.ts')], bundle: true, platform: 'node', target: 'node20', packages: 'external', outfile: BUNDLE, logLevel: 'warning' });
});
afterAll(() => rmSync(BUNDLE, { force: true }));

function bot(args: string[], env: Record<string, string> = {}, command = [BUNDLE]) {
  const r = spawnSync(process.execPath, [...command, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** What `--json` printed: one bot, or `list`'s bots. */
const printed = (out: string) => JSON.parse(out) as BotView;
const listedBots = (out: string) => (JSON.parse(out) as { bots: BotView[] }).bots;

test('create --json prints one object with client and secret keys; the bot serves sessions at once', async () => {
  const r = bot(['create', '--name', 'CLI bot', '--allowed-origin', 'https://shop.example', '--primary-color', '#ff0000', '--multiple-chats', 'true', '--json'], {}, TSX);
  expect(r.code).toBe(0);
  const lines = r.out.trim().split('\n');
  expect(lines).toHaveLength(1);
  const created = printed(lines[0]);
  expect(created).toMatchObject({
    bot_id: expect.any(String),
    client_key: expect.stringMatching(/^cli_[0-9a-f]{32}$/),
    secret_key: expect.stringMatching(/^sk_[0-9a-f]{80}$/),
    name: 'CLI bot',
    enabled: true,
    client_api_enabled: true,
    allowed_origins: ['https://shop.example'],
    widget: { primary_color: '#ff0000', multiple_chats: true, attachments: true },
  });
  const session = await call('POST', '/api/client/session', { json: { client_key: created.client_key }, headers: { origin: 'https://shop.example' } });
  expect(session.status).toBe(200);
  expect(session.body.widget).toEqual(created.widget);
});

test('the CLI refuses a webhook URL to a private or metadata address, naming the rule, and writes nothing', () => {
  const created = printed(bot(['create', '--name', 'hooked', '--json']).out);
  const off = { WEBHOOK_ALLOW_LOOPBACK: 'off' };
  for (const [url, why] of [
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local (cloud metadata) address'],
    ['http://10.0.0.1/', '10.0.0.1 is a private address'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254 is a unique-local address'],
    ['http://0x7f000001/', '127.0.0.1 is a loopback address'],
    ['http://localhost:3002/webhook', 'localhost is a loopback address'],
    ['http://hooks.example/in', 'http: is not https:'],
  ]) {
    const r = bot(['update', created.bot_id, '--webhook-url', url, '--json'], off);
    expect({ url, code: r.code, err: r.err.trim() }).toEqual({ url, code: 2, err: `webhook_url refused: a webhook URL must be https: and reach only public addresses (${why})` });
  }
  const listed = listedBots(bot(['list', '--json']).out).find((b) => b.bot_id === created.bot_id);
  expect(listed?.webhook_url).toBeNull();
  // With --aws (a deployed stage) the local setting does not apply, even when the environment has it on.
  const aws = bot(['update', created.bot_id, '--webhook-url', 'http://localhost/', '--aws'], { TABLE_NAME: process.env.TABLE_NAME as string, WEBHOOK_ALLOW_LOOPBACK: 'on' });
  expect([aws.code, aws.err.trim()]).toEqual([2, 'webhook_url refused: a webhook URL must be https: and reach only public addresses (localhost is a loopback address)']);
  // Locally the setting (on by default) lets the echo bot's kind of URL through.
  expect(printed(bot(['update', created.bot_id, '--webhook-url', 'http://localhost:3002/webhook', '--json']).out).webhook_url).toBe('http://localhost:3002/webhook');
});

test('update switches settings; list shows the bot; the secret is never shown again', async () => {
  const created = printed(bot(['create', '--name', 'to update', '--json']).out);
  const updated = bot(['update', created.bot_id, '--enabled', 'false', '--allowed-origin', 'http://localhost:5173', '--attachments', 'false', '--json']);
  expect(updated.code).toBe(0);
  const u = printed(updated.out);
  expect(u).toMatchObject({ enabled: false, allowed_origins: ['http://localhost:5173'], widget: { attachments: false } });
  expect(u.secret_key).toBeUndefined();
  const session = await call('POST', '/api/client/session', { json: { client_key: created.client_key }, headers: { origin: 'http://localhost:5173' } });
  expect(session.status).toBe(403);

  const cleared = printed(bot(['update', created.bot_id, '--enabled', 'true', '--clear-allowed-origins', '--json']).out);
  expect(cleared.allowed_origins).toEqual([]);
  expect((await call('POST', '/api/client/session', { json: { client_key: created.client_key } })).status).toBe(200);

  const list = listedBots(bot(['list', '--json']).out);
  const one = list.find((b) => b.bot_id === created.bot_id);
  expect(one).toMatchObject({ name: 'to update', client_key: created.client_key });
  expect(one?.secret_key).toBeUndefined();
  expect(JSON.stringify(list)).not.toContain('secret_hash');
});

test('webhook URL and secret rotation from the CLI: new secrets printed once, old ones refused', async () => {
  const created = printed(bot(['create', '--name', 'hooks', '--json']).out);
  const hooked = printed(bot(['update', created.bot_id, '--webhook-url', 'https://hooks.example/in', '--json']).out);
  expect(hooked).toMatchObject({ webhook_url: 'https://hooks.example/in', webhook_secret: expect.stringMatching(/^whsec_[0-9a-f]{64}$/) });
  const again = printed(bot(['rotate-webhook-secret', created.bot_id, '--json']).out);
  expect(again.webhook_secret).toMatch(/^whsec_/);
  expect(again.webhook_secret).not.toBe(hooked.webhook_secret);
  const rotated = printed(bot(['rotate-secret', created.bot_id, '--json']).out);
  expect(rotated.secret_key).toMatch(/^sk_[0-9a-f]{80}$/);
  expect(rotated.webhook_secret).toBeUndefined();
  const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
  expect((await call('GET', '/api/bot/chats', auth(present(created.secret_key, 'the created bot’s secret key')))).status).toBe(401);
  expect((await call('GET', '/api/bot/chats', auth(present(rotated.secret_key, 'the rotated secret key')))).status).toBe(200);
  const cleared = printed(bot(['update', created.bot_id, '--clear-webhook', '--json']).out);
  expect(cleared.webhook_url).toBeNull();
  expect(bot(['rotate-webhook-secret', created.bot_id]).code).toBe(1); // nothing to sign for
  expect(bot(['update', created.bot_id, '--webhook-url', 'ftp://x']).code).toBe(2);
});

test('identity verification from the CLI prints the identity secret once', () => {
  const created = printed(bot(['create', '--name', 'verified', '--json']).out);
  const on = printed(bot(['update', created.bot_id, '--identity-verification', 'on', '--require-identity', 'true', '--json']).out);
  expect(on).toMatchObject({ identity_verification: true, require_identity: true, identity_secret: expect.stringMatching(/^idsec_/) });
  const listed = listedBots(bot(['list', '--json']).out).find((b) => b.bot_id === created.bot_id);
  expect(listed).toMatchObject({ identity_verification: true });
  expect(listed?.identity_secret).toBeUndefined();
  expect(bot(['update', created.bot_id, '--identity-verification', 'maybe']).code).toBe(2);
});

test('bad arguments exit 2 with the reason and usage; unknown bot exits 1', () => {
  for (const args of [['create'], ['create', '--name', 'x', '--allowed-origin', 'https://a.example/'], ['create', '--name', 'x', '--multiple-chats', 'yes'], ['update'], ['frobnicate'], ['create', '--name', 'x', '--primary-color', 'red']]) {
    const r = bot(args);
    expect({ args, code: r.code }).toEqual({ args, code: 2 });
    expect(r.err).toMatch(/Usage:/);
  }
  const missing = bot(['update', '00000000-0000-4000-8000-000000000000', '--enabled', 'false']);
  expect(missing.code).toBe(1);
  expect(missing.err.trim()).toMatch(/not found/);
});

test('when the local stack is not running it says so in one line', async () => {
  const r = bot(['list'], { DYNAMODB_PORT: String(await freePort()) });
  expect(r.code).toBe(1);
  expect(r.err.trim().split('\n')).toHaveLength(1);
  expect(r.err).toMatch(/local stack is not running.*npm start/);
});

// --aws: the table named by TABLE_NAME, with credentials from the usual chain; here a profile in a shared
// credentials file (none in the environment), against DynamoDB Local standing in for the account's table.
test('--aws resolves credentials through the usual chain (AWS_PROFILE) and signs with them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aws-profile-'));
  const credentials = join(dir, 'credentials');
  writeFileSync(credentials, '[cli-test]\naws_access_key_id = AKIDCLITEST\naws_secret_access_key = cli-test-secret\n');
  const env = {
    AWS_ACCESS_KEY_ID: '',
    AWS_SECRET_ACCESS_KEY: '',
    AWS_PROFILE: 'cli-test',
    AWS_SHARED_CREDENTIALS_FILE: credentials,
    AWS_CONFIG_FILE: join(dir, 'config'),
    TABLE_NAME: process.env.TABLE_NAME as string,
  };
  const made = bot(['create', '--name', 'Made with --aws', '--json', '--aws'], env);
  expect(made.err).toBe('');
  expect(made.code).toBe(0);
  const listed = bot(['list', '--json', '--aws'], env);
  expect(listed.code).toBe(0);
  expect(listed.out).toContain(printed(made.out).bot_id);
  // Without any credentials the chain fails, and the CLI says so.
  const none = bot(['list', '--aws'], { ...env, AWS_PROFILE: 'missing-profile' });
  expect(none.code).not.toBe(0);
  expect(none.err).toMatch(/credential|profile/i);
  rmSync(dir, { recursive: true, force: true });
});

test('--unread-reminder sets, prints and clears the bot\'s unread reminder; 0, 901 and words are refused with a clear error', () => {
  const created = printed(bot(['create', '--name', 'reminding', '--unread-reminder', '30', '--json']).out);
  expect(created.unread_reminder_seconds).toBe(30);
  const updated = printed(bot(['update', created.bot_id, '--unread-reminder', '900', '--json']).out);
  expect(updated.unread_reminder_seconds).toBe(900);
  const off = printed(bot(['update', created.bot_id, '--unread-reminder', 'off', '--json']).out);
  expect(off.unread_reminder_seconds).toBeNull();
  for (const bad of ['0', '901', 'soon', '1.5']) {
    const r = bot(['update', created.bot_id, '--unread-reminder', bad]);
    expect([bad, r.code, r.err]).toEqual([bad, 2, expect.stringContaining(`--unread-reminder must be a whole number of seconds from 1 to 900, or off: "${bad}"`)]);
  }
  expect(listedBots(bot(['list', '--json']).out).find((b) => b.bot_id === created.bot_id)?.unread_reminder_seconds).toBeNull();
});

test('--retention-days sets, prints and turns off the retention, printing the task that re-dates what is stored; 0, 3651 and words are refused', () => {
  const created = printed(bot(['create', '--name', 'forgetful', '--retention-days', '30', '--json']).out);
  expect(created.retention_days).toBe(30);
  const updated = printed(bot(['update', created.bot_id, '--retention-days', '3650', '--json']).out);
  expect(updated).toMatchObject({ retention_days: 3650, retention_task_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  // Another setting changed, the retention not: no task; the same retention set again: a new task (done over).
  expect(printed(bot(['update', created.bot_id, '--name', 'still forgetful', '--json']).out).retention_task_id).toBeUndefined();
  const again = printed(bot(['update', created.bot_id, '--retention-days', '3650', '--json']).out);
  expect(again.retention_task_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(again.retention_task_id).not.toBe(updated.retention_task_id);
  const off = printed(bot(['update', created.bot_id, '--retention-days', 'off', '--json']).out);
  expect(off.retention_days).toBeNull();
  expect(off.retention_task_id).not.toBe(updated.retention_task_id);
  for (const bad of ['0', '3651', 'week', '1.5']) {
    const r = bot(['update', created.bot_id, '--retention-days', bad]);
    expect([bad, r.code, r.err]).toEqual([bad, 2, expect.stringContaining(`--retention-days must be a whole number of days from 1 to 3650, or off: "${bad}"`)]);
  }
  expect(listedBots(bot(['list', '--json']).out).find((b) => b.bot_id === created.bot_id)?.retention_days).toBeNull();
});
