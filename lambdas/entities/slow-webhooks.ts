// A bot marked slow: its webhook receiver let a delivery run to the timeout, so for a while its deliveries go to
// the slow lane (flows/webhook-lanes.ts). One item per bot, with an expiry (TTL deletes it later; readers compare).
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, tableName } from '../aws/dynamo';
import { TtlCache } from '../shared/cache';
import { config } from '../shared/config';
import { keys } from './keys';

/**
 * Read at most every few seconds per bot and instance: every job of a bot reads it, and one key value read per
 * exchange would be a hot key. Never longer than the bot cache (off in the tests, so they see a mark at once).
 */
const MARK_CACHE_MS = 5000;
const marks = new TtlCache<number>(() => Math.min(config().botCacheTtlMs, MARK_CACHE_MS));

/** When the bot's mark ends (epoch seconds), 0 when it has none. */
const readMark = (botId: string): Promise<number> =>
  marks.get(botId, async () => {
    const { Item } = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.slowWebhooks(botId) }));
    return typeof Item?.until === 'number' ? Item.until : 0;
  });

export const isMarkedSlow = async (botId: string, nowMs = Date.now()): Promise<boolean> => (await readMark(botId)) * 1000 > nowMs;

/** Marks the bot slow for `seconds` from now (a later timeout moves the end on). */
export async function markSlow(botId: string, seconds: number): Promise<void> {
  const until = Math.floor(Date.now() / 1000) + seconds;
  await dynamo.send(
    new PutCommand({ TableName: tableName(), Item: { ...keys.slowWebhooks(botId), entity: 'slow_webhooks', bot_id: botId, until, ttl: until } }),
  );
  marks.clear(botId);
}
