// A bot's chat list spread over write shards (gsi2), with chats still in the legacy gsi1 list: the Bot API pages
// 500 chats while messages move some of them, and the retention task and an erasure reach chats in every shard.
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { call, newBot, newSession, type CallOptions } from '../support/api';
import { until } from '../support/wait';
import { present, type BotChatPage, type Message, type Schemas } from '../support/contract';
import { batchWrite, dynamo, tableName, type WriteRequest } from '../../lambdas/aws/dynamo';
import { newChatWrites, type Chat, type ChatOwner } from '../../lambdas/entities/chats';
import { chatListShard, keys } from '../../lambdas/entities/keys';
import { readLayout, writeLayout } from '../../lambdas/entities/layout';
import { config } from '../../lambdas/shared/config';
import { newUuid } from '../../lambdas/shared/ids';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { retentionTaskId } from '../../lambdas/flows/retention-task';

const SHARDS = config().chatListShards;
const asBot = (secretKey: string, opts: CallOptions = {}) => ({ ...opts, headers: { authorization: `Bearer ${secretKey}` } });

/**
 * Chats stored as createChat writes them (entities/chats.ts newChatWrites), `at` their creation and activity, 25
 * items per BatchWriteItem (fresh ids: no condition needed). `legacy`: as a chat made before the list was sharded
 * is stored, in its bot's one gsi1 partition; `unread`: user messages counted and not yet read by the operator.
 */
async function seedChats(chats: { owner: ChatOwner; id: string; at: string; legacy?: boolean; unread?: number }[]): Promise<void> {
  const puts = chats.flatMap(({ owner, id, at, legacy, unread }) => {
    const chat: Chat = { id, name: `chat ${id.slice(0, 8)}`, additional_info: {}, image_url: null, unread_msg_by_user: 0, created_at: at, updated_at: at };
    return newChatWrites(owner, chat).map((w, i): WriteRequest => {
      const item = { ...present(w.Put, 'a put').Item };
      if (i === 0 && legacy) Object.assign(item, { gsi2pk: undefined, gsi2sk: undefined, gsi1pk: keys.legacyBotChats(owner.botId), gsi1sk: keys.activityAt(at, id) });
      if (i === 0 && unread) item.unread_msg_by_operator = unread;
      return { PutRequest: { Item: Object.fromEntries(Object.entries(item).filter(([, v]) => v !== undefined)) } };
    });
  });
  const part = Math.ceil(puts.length / 8 / 25) * 25;
  await Promise.all(Array.from({ length: 8 }, (_, n) => batchWrite(puts.slice(n * part, (n + 1) * part))));
}

/** A chat as one made before the list was sharded is stored: in its bot's one gsi1 partition, not in gsi2. */
async function makeLegacy(owner: ChatOwner, chatId: string, at: string): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.chat(owner.userId, chatId),
      UpdateExpression: 'SET gsi1pk = :p, gsi1sk = :s REMOVE gsi2pk, gsi2sk',
      ExpressionAttributeValues: { ':p': keys.legacyBotChats(owner.botId), ':s': keys.activityAt(at, chatId) },
    }),
  );
}

/** How many index entries a list partition holds (gsi2's shard, or gsi1's legacy partition). */
async function listed(index: 'gsi1' | 'gsi2', partition: string): Promise<number> {
  const out = await dynamo.send(
    new QueryCommand({ TableName: tableName(), IndexName: index, KeyConditionExpression: `${index}pk = :p`, ExpressionAttributeValues: { ':p': partition }, Select: 'COUNT' }),
  );
  return out.Count ?? 0;
}

const activityOf = async (owner: ChatOwner, chatId: string) =>
  (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(owner.userId, chatId), ConsistentRead: true }))).Item?.updated_at as string | undefined;

/** A random chat id of the given shard. */
function idOfShard(shard: number): string {
  for (;;) {
    const id = newUuid();
    if (chatListShard(id, SHARDS) === shard) return id;
  }
}

/** A chat id of each shard, in shard order (ids are random: drawn until every shard has one). */
function idPerShard(): string[] {
  const ids = new Map<number, string>();
  while (ids.size < SHARDS) {
    const id = newUuid();
    ids.set(chatListShard(id, SHARDS), id);
  }
  return [...ids.keys()].sort((a, b) => a - b).map((s) => ids.get(s) as string);
}

/**
 * Chats in the legacy list exist only mid-upgrade, while the layout marker is absent (flows/migrate.ts): the test
 * stack caches nothing, so its functions see that at once. Gives what puts the marker back.
 */
async function midUpgrade(): Promise<() => Promise<void>> {
  const marker = await readLayout();
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.layout() }));
  return async () => {
    if (marker) await writeLayout(marker.chat_list_shards);
  };
}

let restoreMarker: (() => Promise<void>) | undefined;
afterEach(async () => {
  await restoreMarker?.();
  restoreMarker = undefined;
});

test('500 chats over every shard, some in the legacy list: paged 25 at a time while messages move chats, no chat twice, none that stayed missing, newest first, unread counts right', async () => {
  const { bot, secretKey } = await newBot();
  const users = await Promise.all(Array.from({ length: 4 }, (_, u) => newSession(bot.client_key, { external_id: `shopper-${u}`, first_name: `F${u}`, last_name: `L${u}` })));
  const owners = users.map((s, u): ChatOwner & { token: string; u: number } => ({ userId: s.user.id, botId: bot.id, externalId: `shopper-${u}`, token: s.session_token, u }));
  const base = Date.now() - 3_600_000;
  // Every 20th chat still in the legacy list; every 6th with 1 to 3 user messages the operator has not read; 40 in
  // a row (more than a page) all in shard 5, so a page can come from one shard alone.
  const chats = Array.from({ length: 500 }, (_, i) => ({
    owner: owners[i % owners.length],
    id: i >= 200 && i < 240 ? idOfShard(5) : newUuid(),
    at: new Date(base + i * 1000).toISOString(),
    legacy: i % 20 === 7,
    unread: i % 6 === 0 ? 1 + ((i / 6) % 3) : 0,
  }));
  const byId = new Map(chats.map((c) => [c.id, c]));
  restoreMarker = await midUpgrade();
  await seedChats(chats);
  // The spread is real: every shard holds chats, the legacy partition the rest.
  const counts = await Promise.all(Array.from({ length: SHARDS }, (_, s) => listed('gsi2', keys.botChats(bot.id, s))));
  expect(counts.filter((n) => n === 0)).toEqual([]);
  expect([counts.reduce((a, b) => a + b), await listed('gsi1', keys.legacyBotChats(bot.id))]).toEqual([475, 25]);

  const seen: BotChatPage['chats'] = [];
  const moved = new Set<string>();
  let cursor: string | null | undefined;
  for (let page = 0; cursor !== null; page++) {
    const res = await call<BotChatPage>('GET', `/api/bot/chats?limit=25${cursor ? `&cursor=${cursor}` : ''}`, asBot(secretKey));
    expect(res.status).toBe(200);
    expect(res.body.chats.length).toBeLessThanOrEqual(25);
    seen.push(...res.body.chats);
    cursor = res.body.next_cursor;
    if (page % 3 !== 0 || cursor === null) continue;
    // Between pages: a user message in a chat already listed and a reply in one not yet listed (a legacy one each
    // time there is one), and once their counts have moved the chats, the next page.
    const listedIds = new Set(seen.map((c) => c.id));
    const pick = (wantSeen: boolean, legacy: boolean) => chats.find((c) => !moved.has(c.id) && listedIds.has(c.id) === wantSeen && c.legacy === legacy);
    const picks = [...new Set([pick(true, page % 2 === 0), pick(false, page % 2 === 0), pick(false, false)])].filter((c): c is (typeof chats)[number] => Boolean(c));
    const sent = await Promise.all(
      picks.map(async (c, k) => {
        moved.add(c.id);
        const body = { content: `move ${page}.${k}` };
        const res = k === 0 ? await call<Message>('POST', `/api/client/chats/${c.id}/messages`, { token: c.owner.token, json: body }) : await call<Message>('POST', `/api/bot/chats/${c.id}/messages`, asBot(secretKey, { json: body }));
        expect(res.status).toBe(201);
        return { c, at: res.body.created_at };
      }),
    );
    await until(async () => (await Promise.all(sent.map(async ({ c, at }) => (await activityOf(c.owner, c.id)) === at))).every(Boolean), 15_000, 'the moves counted');
  }
  const ids = seen.map((c) => c.id);
  // No chat twice; every chat that did not move listed.
  expect(ids.length - new Set(ids).size).toBe(0);
  expect(chats.filter((c) => !moved.has(c.id) && !ids.includes(c.id)).map((c) => c.id)).toEqual([]);
  expect(moved.size).toBeGreaterThanOrEqual(10);
  // Newest activity first across all pages; each as stored, with its user and the operator's unread count.
  const order = seen.map((c) => keys.activityAt(c.updated_at, c.id));
  expect(order).toEqual([...order].sort().reverse());
  for (const c of seen) {
    const { owner } = present(byId.get(c.id), `seeded chat ${c.id}`);
    expect({ id: c.id, unread: c.unread_count, user: c.user }).toEqual({
      id: c.id,
      unread: byId.get(c.id)?.unread,
      user: { id: owner.userId, external_id: owner.externalId, first_name: `F${owner.u}`, last_name: `L${owner.u}` },
    });
  }
  // A fresh first page: the moved chats on top, each now in its shard of gsi2.
  const top = await call<BotChatPage>('GET', `/api/bot/chats?limit=${moved.size}`, asBot(secretKey));
  expect(new Set(top.body.chats.map((c) => c.id))).toEqual(moved);
  expect(await listed('gsi1', keys.legacyBotChats(bot.id))).toBe(25 - [...moved].filter((id) => byId.get(id)?.legacy).length);
});

test('the retention task re-dates the messages of chats in every shard and in the legacy list; an erasure removes them from every one', async () => {
  const { bot, secretKey } = await newBot();
  const s = await newSession(bot.client_key, { external_id: 'everywhere' });
  const owner: ChatOwner = { userId: s.user.id, botId: bot.id, externalId: 'everywhere' };
  const at = new Date().toISOString();
  const chats = [...idPerShard(), newUuid()].map((id) => ({ owner, id, at }));
  await seedChats(chats);
  const messages = await Promise.all(
    chats.map(async (c) => (await call<Message>('POST', `/api/client/chats/${c.id}/messages`, { token: s.session_token, json: { content: 'hello' } })).body),
  );
  // Once its message has moved it, the last chat goes back to the legacy list, as stored before the list was sharded.
  const last = present(chats.at(-1), 'the legacy chat');
  await until(async () => (await activityOf(owner, last.id)) === messages.at(-1)?.created_at, 15_000, 'the last chat counted');
  await makeLegacy(owner, last.id, at);
  expect(await listed('gsi1', keys.legacyBotChats(bot.id))).toBe(1);

  const { updated_at } = (await updateBot(bot.id, { retention_days: 30 })).bot;
  const taskId = retentionTaskId(bot.id, updated_at);
  await until(async () => (await call<Schemas['Task']>('GET', `/api/bot/tasks/${taskId}`, asBot(secretKey))).body.status === 'completed', 20_000, 'the retention task');
  const ttls = await Promise.all(
    messages.map(async (m): Promise<unknown> => (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.message(owner.userId, m.chat_id, m.id), ConsistentRead: true }))).Item?.ttl),
  );
  expect(ttls.filter((t) => typeof t !== 'number')).toEqual([]);

  const erase = await call<Schemas['Task']>('DELETE', `/api/bot/users/${owner.userId}`, asBot(secretKey));
  expect(erase.status).toBe(202);
  await until(async () => (await call<Schemas['Task']>('GET', `/api/bot/tasks/${erase.body.task_id}`, asBot(secretKey))).body.status === 'completed', 20_000, 'the erasure');
  expect((await call<BotChatPage>('GET', '/api/bot/chats', asBot(secretKey))).body.chats).toEqual([]);
  const left = await Promise.all([...Array.from({ length: SHARDS }, (_, n) => listed('gsi2', keys.botChats(bot.id, n))), listed('gsi1', keys.legacyBotChats(bot.id))]);
  expect(left.reduce((a, b) => a + b)).toBe(0);
});
