// A chat's list entry moved to the layout this code writes: off gsi1 (`BOT#<bot>`, before the list was sharded)
// onto gsi2, or into its shard for the current shard count (flows/migrate.ts). Each move holds only while the
// entry is as it was read, so a live write that comes between (a message moving the chat) is never lost.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionMet, dynamo, tableName, type RawItem } from '../aws/dynamo';
import { keys, type Key } from './keys';

/** Whether a chat item's list entry is not where the current layout puts it. */
export function chatNeedsMove(item: RawItem, shards: number): boolean {
  if (item.entity !== 'chat') return false;
  if (typeof item.gsi1pk === 'string' || typeof item.gsi1sk === 'string') return true;
  return typeof item.gsi2pk === 'string' && item.gsi2pk !== shardKey(item, shards);
}

/** The gsi2 partition of the chat's shard. */
const shardKey = (item: RawItem, shards: number): string => keys.chatActivity(item.bot_id as string, '', item.id as string, shards).gsi2pk;

/** The later of the item's activity keys: a live write may have moved one of them since the chat was listed on gsi1. */
function activityKey(item: RawItem): string {
  const candidates = [item.gsi1sk, item.gsi2sk].filter((v): v is string => typeof v === 'string');
  return candidates.sort().at(-1) ?? keys.activityAt(item.created_at as string, item.id as string);
}

/** One conditional write; false when the entry changed since `item` was read. */
async function moveOnce(item: RawItem, shards: number): Promise<boolean> {
  const same = (name: string, i: number) => (item[name] === undefined ? `attribute_not_exists(#k${i})` : `#k${i} = :k${i}`);
  const watched = ['gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'];
  return conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { pk: item.pk as string, sk: item.sk as string },
        UpdateExpression: 'SET gsi2pk = :pk, gsi2sk = :sk REMOVE gsi1pk, gsi1sk',
        ConditionExpression: 'attribute_exists(pk) AND ' + watched.map(same).join(' AND '),
        ExpressionAttributeNames: Object.fromEntries(watched.map((n, i) => [`#k${i}`, n])),
        ExpressionAttributeValues: {
          ':pk': shardKey(item, shards),
          ':sk': activityKey(item),
          ...Object.fromEntries(watched.flatMap((n, i) => (item[n] === undefined ? [] : [[`:k${i}`, item[n]]]))),
        },
      }),
    ),
  );
}

/** Tries a few times: each lost race means a live write changed the entry, which is rare and short. */
const MOVE_ATTEMPTS = 5;

/** Moves the chat's list entry, reading it again after each lost race; a chat deleted meanwhile is done. */
export async function moveChatListEntry(item: RawItem, shards: number): Promise<void> {
  let current: RawItem | undefined = item;
  for (let attempt = 0; attempt < MOVE_ATTEMPTS; attempt++) {
    if (!current || !chatNeedsMove(current, shards) || (await moveOnce(current, shards))) return;
    const key: Key = { pk: item.pk as string, sk: item.sk as string };
    current = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
  }
  throw new Error(`The chat's list entry kept changing while it was moved (${MOVE_ATTEMPTS} attempts)`);
}
