// Upgrading a data folder: the local stack started on a table written by the previous layout (commit 8322a2d,
// test/fixtures/legacy-layout) adds gsi2, moves the data a small page at a time while it answers, and ends with
// no legacy key and the layout marker set; the move run again changes nothing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteItemCommand, CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand, type AttributeValue, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ROOT, stackEnv, startLocalProcess, type LocalProcess } from '../support/local-process';
import { call } from '../support/http';
import { until } from '../support/wait';
import { startDynamoLocal } from '../../lib/local/dynamodb';
import { chatListShard, keys, LAYOUT_VERSION } from '../../lambdas/entities/keys';
import { DEFAULT_CHAT_LIST_SHARDS } from '../../lambdas/shared/config';

interface Fixture {
  written_at: number;
  bot: { bot_id: string; client_key: string; secret_key: string };
  schema: Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'GlobalSecondaryIndexes'>;
  items: Record<string, AttributeValue>[];
}

const fixture = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'legacy-layout', 'table.json'), 'utf8')) as Fixture;
const TABLE = 'chat-local';
const stored = fixture.items.map((i) => unmarshall(i));
const ofEntity = (entity: string) => stored.filter((i) => i.entity === entity);
/** Every user of the fixture by external id, its id as the old code gave it. */
const userIds = new Map(ofEntity('user').map((u) => [u.external_id as string, u.id as string]));
const chatIds = ofEntity('chat').map((c) => c.id as string);
const secret = fixture.bot.secret_key;

let stack: LocalProcess;
let dir: string;
let env: Record<string, string>;
let db: DynamoDBDocumentClient;

/** The table as the old code left it: its schema (gsi1 only), its items, every ttl moved by the fixture's age. */
async function loadFixture(endpoint: string): Promise<void> {
  const ddb = new DynamoDBClient({ endpoint, region: 'us-east-1' });
  await ddb.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      ...fixture.schema,
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  await ddb.send(new UpdateTimeToLiveCommand({ TableName: TABLE, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }));
  const age = Math.floor(Date.now() / 1000) - fixture.written_at;
  const items = fixture.items.map((i) => (i.ttl?.N ? { ...i, ttl: { N: String(Number(i.ttl.N) + age) } } : i));
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, b) => items.slice(b * 25, (b + 1) * 25));
  await Promise.all(batches.map((batch) => ddb.send(new BatchWriteItemCommand({ RequestItems: { [TABLE]: batch.map((Item) => ({ PutRequest: { Item } })) } }))));
  ddb.destroy();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chat-migrate-'));
  // A few items per page and one page per run: the move takes many task runs, so the checks below meet it midway.
  env = await stackEnv(dir, { DYNAMODB_IN_MEMORY: 'off', REALTIME: 'off', ECHO_BOT: 'off', TABLE_NAME: TABLE, MIGRATE_PAGE_ITEMS: '8', MIGRATE_PAGES_PER_RUN: '1' });
  const dynamo = await startDynamoLocal('127.0.0.1', Number(env.DYNAMODB_PORT), join(dir, 'dynamodb'));
  await loadFixture(dynamo.endpoint);
  await dynamo.stop();
  // The stack goes on with the bot it had (its keys kept in the data folder, as `npm start` keeps them).
  writeFileSync(join(dir, 'demo-bot.json'), JSON.stringify(fixture.bot));
  stack = await startLocalProcess(env);
  db = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: `http://127.0.0.1:${env.DYNAMODB_PORT}`, region: 'us-east-1' }));
}, 90_000); // DynamoDB Local starts twice: to load the fixture, then under the stack

afterAll(async () => {
  db?.destroy();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** This file's stack; call() checks each reply against docs/openapi.yaml, the type names what a test reads of it. */
const api = <T = Record<string, unknown>>(method: string, path: string, opts: { token?: string; json?: unknown } = {}) => call<T>(method, path, { base: stack.apiUrl, ...opts });
type ChatPage = { chats: { id: string }[]; next_cursor: string | null };
type SessionReply = { session_token: string; user: { id: string } };

async function scanAll(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db.send(new ScanCommand({ TableName: TABLE, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** What the stream and the TTL sweeper do not move on their own: the move's own tasks and marker, rate windows and a chat's counters left out. */
async function settledItems(): Promise<Record<string, unknown>[]> {
  const moving = ['updated_at', 'gsi2sk', 'last_event', 'counted_seq', 'unread_msg_by_user', 'unread_msg_by_operator'];
  return (await scanAll())
    .filter((i) => !['task', 'layout', 'rate'].includes(i.entity as string))
    .map((i) => (i.entity === 'chat' ? Object.fromEntries(Object.entries(i).filter(([k]) => !moving.includes(k))) : i));
}

const marker = async () => (await db.send(new GetCommand({ TableName: TABLE, Key: keys.layout(), ConsistentRead: true }))).Item;
const atLegacyKey = async (externalId: string) =>
  Boolean((await db.send(new GetCommand({ TableName: TABLE, Key: keys.legacyUser(fixture.bot.bot_id, externalId), ConsistentRead: true }))).Item);

/** Every chat of the bot, page after page of the Bot API's list. */
async function listedChats(): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<ChatPage>('GET', `/api/bot/chats?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: secret });
    expect(page.status).toBe(200);
    ids.push(...page.body.chats.map((c) => c.id));
    cursor = page.body.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

/** A chat's whole history through the Bot API, oldest first. */
async function history(chatId: string): Promise<string[]> {
  const res = await api<{ id: string }[]>('GET', `/api/bot/chats/${chatId}/messages?limit=100`, { token: secret });
  expect(res.status).toBe(200);
  return res.body.map((m) => m.id).sort();
}

const session = (externalId: string) => api<SessionReply>('POST', '/api/client/session', { json: { client_key: fixture.bot.client_key, external_id: externalId } });

test('the service answers while the move runs: returning users keep their id (never duplicated), every chat is listed with its history, an old chat takes new messages, tasks and files read', async () => {
  expect(stack.output()).toMatch(/table chat-local: updated/);
  expect(stack.output()).toMatch(/data move [0-9a-f-]+: pending/);
  const messagesOf = (chatId: string) => ofEntity('message').filter((m) => m.chat_id === chatId).map((m) => m.id as string).sort();
  let rounds = 0;
  let metLegacy = false;
  const shoppers = [...userIds.keys()].filter((e) => e.startsWith('shopper-'));
  do {
    // A user still at its legacy key, if any: two sessions at once, both the same user as before.
    const pick = await (async () => {
      for (const e of shoppers) if (await atLegacyKey(e)) return e;
      return shoppers[rounds % shoppers.length];
    })();
    if (rounds === 0) metLegacy = (await scanAll()).some((i) => i.gsi1pk === keys.legacyBotChats(fixture.bot.bot_id) || (i.entity === 'user' && String(i.sk).startsWith('EXT#')));
    const [a, b] = await Promise.all([session(pick), session(pick)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.body.user.id, b.body.user.id]).toEqual([userIds.get(pick), userIds.get(pick)]);
    const found = await api<{ id: string }>('GET', `/api/bot/users?external_id=${pick}`, { token: secret });
    expect(found.body.id).toBe(userIds.get(pick));
    // Every chat listed once, each history whole.
    const listed = await listedChats();
    expect([...listed].sort()).toEqual([...chatIds].sort());
    const chatId = chatIds[rounds % chatIds.length];
    expect(await history(chatId)).toEqual(messagesOf(chatId));
    rounds++;
  } while (!(await marker()));
  // The first round met the move midway: items were still at legacy keys (users share one partition, so the
  // scan meets them together; the race of a session with the move is the last test's).
  expect(metLegacy).toBe(true);

  // An old chat takes a new message and a reply; it then leads the bot's list.
  const first = userIds.get('shopper-1') as string;
  const chat = ofEntity('chat').find((c) => c.user_id === first) as Record<string, string>;
  const token = (await session('shopper-1')).body.session_token;
  const sent = await api('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'Back after the upgrade' } });
  expect(sent.status).toBe(201);
  expect((await api('POST', `/api/bot/chats/${chat.id}/messages`, { token: secret, json: { content: 'Welcome back' } })).status).toBe(201);
  expect((await history(chat.id)).length).toBe(messagesOf(chat.id).length + 2);
  await until(async () => (await api<ChatPage>('GET', '/api/bot/chats?limit=1', { token: secret })).body.chats[0]?.id === chat.id, 15_000, 'the old chat to lead the list');
  // Its file and the export task the old code made still read.
  const fileId = ofEntity('file')[0].id as string;
  expect((await api('GET', `/api/client/files/${fileId}`, { token })).body).toMatchObject({ id: fileId, status: 'uploaded' });
  const taskId = ofEntity('task')[0].task_id as string;
  expect((await api('GET', `/api/bot/tasks/${taskId}`, { token: secret })).body).toMatchObject({ task_id: taskId, kind: 'export', status: 'completed' });
}, 60_000);

test('after the move: no legacy key is left, each user is stored once at its own key, each chat in its shard, the marker set; the move run again changes nothing', async () => {
  await until(async () => Boolean(await marker()), 30_000, 'the layout marker');
  const items = await scanAll();
  const users = items.filter((i) => i.entity === 'user');
  expect(users.map((u) => [u.pk, u.sk]).sort()).toEqual([...userIds.keys()].map((e) => [keys.user(fixture.bot.bot_id, e).pk, 'USER']).sort());
  expect(users.map((u) => u.id).sort()).toEqual([...userIds.values()].sort());
  for (const c of items.filter((i) => i.entity === 'chat')) {
    expect(c).not.toHaveProperty('gsi1pk');
    expect(c.gsi2pk).toBe(keys.botChats(fixture.bot.bot_id, chatListShard(c.id as string, DEFAULT_CHAT_LIST_SHARDS)));
  }
  expect(await marker()).toMatchObject({ version: LAYOUT_VERSION, chat_list_shards: DEFAULT_CHAT_LIST_SHARDS });
  // The operator's command, with the marker gone, walks the whole table again: every item stays as it is.
  await db.send(new DeleteCommand({ TableName: TABLE, Key: keys.layout() }));
  const before = await settledItems();
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'bot.ts'), 'migrate', '--json'], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  expect(run.status).toBe(0);
  // Its last line is the answer (the move's own log lines come before it).
  expect(JSON.parse(run.stdout.trim().split('\n').at(-1) as string)).toMatchObject({ status: 'completed' });
  expect(await settledItems()).toEqual(before);
  expect(await marker()).toMatchObject({ version: LAYOUT_VERSION, chat_list_shards: DEFAULT_CHAT_LIST_SHARDS });
}, 60_000);

test('a session, a look-up and the move racing on a legacy user end with one user, its id kept', async () => {
  // This process's own service modules on this file's table, the marker gone: a stage mid-upgrade.
  Object.assign(process.env, { TABLE_NAME: TABLE, DYNAMODB_ENDPOINT: `http://127.0.0.1:${env.DYNAMODB_PORT}` });
  const { reloadConfig } = await import('../../lambdas/shared/config');
  reloadConfig();
  const { findOrCreateUser, findUser } = await import('../../lambdas/entities/users');
  const { moveLegacyUser } = await import('../../lambdas/entities/legacy-users');
  await db.send(new DeleteCommand({ TableName: TABLE, Key: keys.layout() }));
  const botId = fixture.bot.bot_id;
  // Legacy users as the old code wrote them (the fixture's, under new external ids), each raced three ways.
  const legacy = Array.from({ length: 8 }, (_, n) => {
    const user = ofEntity('user')[n % userIds.size];
    return { ...user, ...keys.legacyUser(botId, `late-${n}`), external_id: `late-${n}`, id: `00000000-0000-4000-8000-00000000000${n}` };
  });
  for (const Item of legacy) await db.send(new PutCommand({ TableName: TABLE, Item }));
  // Half of them meet the move task too; the other half only sessions (which move the user themselves).
  const results = await Promise.all(
    legacy.map(async (item, n) => {
      const e = item.external_id;
      const [a, b, found] = await Promise.all([
        findOrCreateUser(botId, e, {}),
        findOrCreateUser(botId, e, { first_name: 'Again' }),
        findUser(botId, e),
        ...(n % 2 ? [moveLegacyUser(item)] : []),
      ]);
      return [a.id, b.id, found.id, item.id];
    }),
  );
  for (const ids of results) expect(new Set(ids).size).toBe(1);
  const users = (await scanAll()).filter((i) => i.entity === 'user' && String(i.external_id).startsWith('late-'));
  expect(users.map((u) => `${String(u.pk)}|${String(u.sk)}|${String(u.id)}`).sort()).toEqual(
    legacy.map((l) => `${keys.user(botId, l.external_id).pk}|USER|${l.id}`).sort(),
  );
}, 30_000);
