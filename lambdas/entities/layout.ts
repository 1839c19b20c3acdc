// The data layout the table is at: a marker item the move task (flows/migrate.ts) writes once every item is at the
// current keys. Until then reads fall back to where data lived before (users: their old key; the chat list: gsi1).
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName, type Stored, type RawItem } from '../aws/dynamo';
import { TtlCache } from '../shared/cache';
import { config } from '../shared/config';
import { keys, LAYOUT_VERSION } from './keys';

export { LAYOUT_VERSION };

export interface LayoutMarker {
  version: number;
  /** The chat list's shard count every chat's gsi2 key was written for. */
  chat_list_shards: number;
  moved_at: string;
}

const markerFromItem = (raw: RawItem): LayoutMarker => {
  const item = raw as Stored<LayoutMarker>;
  return { version: item.version, chat_list_shards: item.chat_list_shards, moved_at: item.moved_at };
};

export async function readLayout(): Promise<LayoutMarker | undefined> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.layout(), ConsistentRead: true }));
  return out.Item && markerFromItem(out.Item);
}

/** Written by the move task once nothing is left at an older key. */
export async function writeLayout(shards: number): Promise<void> {
  const item: LayoutMarker = { version: LAYOUT_VERSION, chat_list_shards: shards, moved_at: new Date().toISOString() };
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.layout(), entity: 'layout', ...item } }));
}

/** Where reads must still look: users at their legacy key; the chat list on gsi1 and in the shards of an older count. */
export interface LayoutState {
  legacyUsers: boolean;
  legacyChatList: boolean;
  /** The shard count the chats may still be keyed for (the marker's, while a re-shard runs), else the current one. */
  previousShards: number;
}

export const isCurrent = (m: LayoutMarker | undefined, shards: number): boolean => m?.version === LAYOUT_VERSION && m.chat_list_shards === shards;

// Per instance, like the bot settings: a finished move (or a marker removed to redo one) is seen within BOT_CACHE_TTL_MS.
const cache = new TtlCache<LayoutMarker | undefined>(() => config().botCacheTtlMs);

export async function layoutState(): Promise<LayoutState> {
  const shards = config().chatListShards;
  const marker = await cache.get('layout', readLayout);
  const usersMoved = (marker?.version ?? 0) >= LAYOUT_VERSION;
  return {
    legacyUsers: !usersMoved,
    legacyChatList: !isCurrent(marker, shards),
    previousShards: usersMoved ? (marker as LayoutMarker).chat_list_shards : shards,
  };
}

/** Tests: forget what this instance saw. */
export function forgetLayout(): void {
  cache.clear();
}
