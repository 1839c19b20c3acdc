// Users stored at their legacy key (`BOT#<bot>` / `EXT#<ext>`, before each user had a partition of its own), while
// the move (flows/migrate.ts) runs: moving one, and finding one at either key. An item only ever goes from the
// legacy key to the new one, in one transaction, so a read of the legacy key and then of the new one never misses it.
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, conditionMet, dynamo, tableName, type RawItem } from '../aws/dynamo';
import { transactWrite } from '../aws/transact';
import { log } from '../shared/log';
import { keys, type Key } from './keys';

/** What a write to a user item changes (a session: last_seen_at and names; its reference: ref; an erasure: erase_task). */
const WATCHED = ['id', 'last_seen_at', 'first_name', 'last_name', 'ref', 'erase_task'] as const;

/** A condition that holds only while the item is as it was read: a move never drops a write that came after its read. */
function unchanged(item: RawItem): { ConditionExpression: string; ExpressionAttributeNames: Record<string, string>; ExpressionAttributeValues: Record<string, unknown> } {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const terms = WATCHED.map((name, i) => {
    names[`#w${i}`] = name;
    if (item[name] === undefined) return `attribute_not_exists(#w${i})`;
    values[`:w${i}`] = item[name];
    return `#w${i} = :w${i}`;
  });
  return { ConditionExpression: terms.join(' AND '), ExpressionAttributeNames: names, ExpressionAttributeValues: values };
}

const legacyKeyOf = (item: RawItem): Key => ({ pk: item.pk as string, sk: item.sk as string });

/**
 * Moves one legacy user item to its new key: the new item put if absent and the legacy one deleted if unchanged,
 * in one transaction. False when it lost a race (the item changed or went; the caller reads again). Should the new
 * key hold a user already, that one is kept (sessions have used it since) and the legacy item is dropped.
 */
export async function moveLegacyUser(item: RawItem): Promise<boolean> {
  const { pk: _pk, sk: _sk, ...fields } = item;
  const target = keys.user(fields.bot_id as string, fields.external_id as string);
  const failed = await transactWrite([
    { Put: { TableName: tableName(), Item: { ...fields, ...target }, ConditionExpression: 'attribute_not_exists(pk)' } },
    { Delete: { TableName: tableName(), Key: legacyKeyOf(item), ...unchanged(item) } },
  ]);
  if (failed < 0) return true;
  if (failed === 0) {
    const there = await dynamo.send(new GetCommand({ TableName: tableName(), Key: target, ConsistentRead: true }));
    if (there.Item?.id !== fields.id) log('warn', 'a legacy user item is dropped: its new key holds another user', { bot_id: fields.bot_id, user_id: fields.id });
    await conditionMet(dynamo.send(new DeleteCommand({ TableName: tableName(), Key: legacyKeyOf(item), ...unchanged(item) })));
  }
  return false;
}

/** Tries a few times: each lost race means another writer changed the item, which is rare and short. */
const MOVE_ATTEMPTS = 5;

/** The user with this external id moved off its legacy key if it is there (a session does it before its upsert). */
export async function moveLegacyUserOf(botId: string, externalId: string): Promise<void> {
  for (let attempt = 0; attempt < MOVE_ATTEMPTS; attempt++) {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.legacyUser(botId, externalId), ConsistentRead: true }));
    if (!out.Item || (await moveLegacyUser(out.Item))) return;
  }
  throw new Error(`The user item kept changing while it was moved (${MOVE_ATTEMPTS} attempts)`);
}

/** The user at either key, strongly consistent: the legacy key first, then the new one (where a move between them put it). */
export async function userAtEitherKey(botId: string, externalId: string): Promise<RawItem | undefined> {
  for (const Key of [keys.legacyUser(botId, externalId), keys.user(botId, externalId)]) {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }));
    if (out.Item) return out.Item;
  }
  return undefined;
}

/**
 * The users with these external ids at either key. A user missing at both was moved between the two reads:
 * a second, strongly consistent read of the new keys finds it.
 */
export async function usersAtEitherKey(botId: string, externalIds: string[], consistent: boolean): Promise<RawItem[]> {
  const items = await batchGet(externalIds.flatMap((e) => [keys.user(botId, e), keys.legacyUser(botId, e)]), consistent);
  const found = new Map<string, RawItem>();
  // The new key wins should both be read (the legacy one read before its move committed).
  for (const item of items) if (!found.has(item.external_id as string) || item.sk === keys.user(botId, '').sk) found.set(item.external_id as string, item);
  const missing = externalIds.filter((e) => !found.has(e));
  const again = missing.length ? await batchGet(missing.map((e) => keys.user(botId, e)), true) : [];
  return [...found.values(), ...again];
}
