// A bot's chats by last activity: gsi2, spread over write shards (keys only), and the legacy gsi1 partition of
// chats not moved yet. The Bot API's page (every shard read at once, merged below one boundary) and the tasks'
// walk over every chat (shard after shard, resumable).
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, dynamo, tableName, type RawItem } from '../aws/dynamo';
import { config } from '../shared/config';
import { byCodeUnits } from '../shared/ids';
import { chatFromItem, type ChatItem } from './chats';
import { keys } from './keys';
import { layoutState } from './layout';

/** Where a bot's chats are listed: gsi2 by shard, or the legacy gsi1 partition. */
type Part = number | 'legacy';

/** One chat as a list index gives it: its item's key, its id, and its place (the activity sort key). */
interface Listed {
  pk: string;
  sk: string;
  chatId: string;
  activity: string;
  /** The index entry's own key (a Query's ExclusiveStartKey). */
  key: Record<string, string>;
}

const INDEX = {
  legacy: { name: 'gsi1', pk: 'gsi1pk', sk: 'gsi1sk' },
  shard: { name: 'gsi2', pk: 'gsi2pk', sk: 'gsi2sk' },
} as const;

/**
 * Where a bot's chats may be listed now: the legacy gsi1 partition too while chats may still be only there (one
 * more small Query), and the shards of the count the chats were keyed for as well while a change of
 * CHAT_LIST_SHARDS re-shards them. The data move (flows/migrate.ts) says when neither is left (its marker).
 */
export interface ListLayout {
  legacy: boolean;
  shards: number;
}

export async function listLayout(): Promise<ListLayout> {
  const state = await layoutState();
  return { legacy: state.legacyChatList, shards: Math.max(config().chatListShards, state.legacyChatList ? state.previousShards : 0) };
}

/** The parts a bot's chats are in, in the order a walk takes them: the legacy partition first (see botChatsWalk). */
const partsOf = ({ legacy, shards }: ListLayout): Part[] => [...(legacy ? (['legacy'] as const) : []), ...Array.from({ length: shards }, (_, i) => i)];

async function queryPart(
  botId: string,
  part: Part,
  page: { limit: number; newestFirst: boolean; before?: string; start?: Record<string, string> },
): Promise<{ listed: Listed[]; last?: Record<string, string> }> {
  const index = part === 'legacy' ? INDEX.legacy : INDEX.shard;
  const out = await dynamo.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: index.name,
      KeyConditionExpression: `#pk = :p${page.before === undefined ? '' : ' AND #sk < :before'}`,
      ExpressionAttributeNames: { '#pk': index.pk, '#sk': index.sk },
      ExpressionAttributeValues: { ':p': part === 'legacy' ? keys.legacyBotChats(botId) : keys.botChats(botId, part), ...(page.before !== undefined && { ':before': page.before }) },
      ScanIndexForward: !page.newestFirst,
      Limit: page.limit,
      ExclusiveStartKey: page.start,
      // gsi1 copies whole chats: only the keys come back, as from gsi2.
      ProjectionExpression: 'pk, sk, #pk, #sk',
    }),
  );
  const listed = (out.Items ?? []).map((i: RawItem): Listed => {
    const [pk, sk, ipk, isk] = [String(i.pk), String(i.sk), String(i[index.pk]), String(i[index.sk])];
    return { pk, sk, chatId: sk.slice(keys.chatPrefix.length), activity: isk, key: { pk, sk, [index.pk]: ipk, [index.sk]: isk } };
  });
  return { listed, last: out.LastEvaluatedKey as Record<string, string> | undefined };
}

/**
 * A page of the bot's chats, newest activity first, below `before` (the last activity of the page before, none
 * for the first page). Every shard (and the legacy partition when `layout.legacy`) is queried at once for its `limit`
 * newest below the boundary: the page's chats are among them. Merged (a chat moved between two reads counts
 * once, at its newest place), the page is the first `limit`, read from the table in one BatchGet (the index
 * holds keys only); a chat deleted or moved in between is left out. `last` is the page's boundary, none at the end.
 * A chat whose activity moves goes above the boundary, so a later page never repeats it, and one that does not
 * move stays below it, so none is skipped.
 */
export async function botChatsPage(botId: string, limit: number, before: string | undefined, layout: ListLayout): Promise<{ chats: ChatItem[]; last?: string }> {
  const parts = await Promise.all(partsOf(layout).map((part) => queryPart(botId, part, { limit, newestFirst: true, before })));
  const newest = new Map<string, Listed>();
  for (const l of parts.flatMap((p) => p.listed)) {
    const seen = newest.get(l.chatId);
    if (!seen || seen.activity < l.activity) newest.set(l.chatId, l);
  }
  const merged = [...newest.values()].sort((a, b) => byCodeUnits(b.activity, a.activity));
  const page = merged.slice(0, limit);
  // More may follow when the merge had more than the page, or a part stopped at its limit.
  const more = merged.length > limit || parts.some((p) => p.last);
  const items = new Map((await batchGet(page.map(({ pk, sk }) => ({ pk, sk })))).map((i) => [`${String(i.pk)}|${String(i.sk)}`, i]));
  // A chat whose activity moved on since the index read is above the boundary now (and may be on an earlier page,
  // read before an index entry caught up), so it is left out like one deleted meanwhile.
  const chats = page.flatMap((l) => {
    const item = items.get(`${l.pk}|${l.sk}`);
    const chat = item && chatFromItem(item);
    return chat && keys.activityAt(chat.updated_at, chat.id) <= l.activity ? [chat] : [];
  });
  return { chats, last: more && page.length ? page[page.length - 1].activity : undefined };
}

/** Where a walk over a bot's chats stands: the part it is in, and the last entry done there (JSON, for a task's cursor). */
export interface WalkAt {
  part: Part;
  key?: Record<string, string>;
}

/** A chat as a walk over all of them sees it: whose, and where the walk stands once it is done. */
export interface WalkedChat {
  id: string;
  user_id: string;
  at: WalkAt;
}

/**
 * Up to `limit` of the bot's chats from `from` on: the legacy partition (when `layout.legacy`), then each shard, each
 * oldest activity first. A chat only moves forward (to the end of its shard, or from the legacy partition to
 * its shard, walked later), so a walk skips none; it may see one twice. `next` is none once every part is done.
 */
export async function botChatsWalk(botId: string, limit: number, layout: ListLayout, from?: WalkAt): Promise<{ chats: WalkedChat[]; next?: WalkAt }> {
  const parts = partsOf(layout);
  // A cursor of a part no longer walked: the legacy partition once none is left there starts the shards; a shard
  // beyond the count (lowered since) has nothing left to walk.
  let at: WalkAt | undefined = !from || (from.part === 'legacy' && !layout.legacy) ? { part: parts[0] } : parts.includes(from.part) ? from : undefined;
  const chats: WalkedChat[] = [];
  while (at && chats.length < limit) {
    const { part } = at;
    const out = await queryPart(botId, part, { limit: limit - chats.length, newestFirst: false, start: at.key });
    for (const l of out.listed) chats.push({ id: l.chatId, user_id: l.pk.slice(keys.userPartition('').length), at: { part, key: l.key } });
    const following = parts[parts.indexOf(part) + 1];
    at = out.last ? { part, key: out.last } : following === undefined ? undefined : { part: following };
  }
  return { chats, next: at };
}
