// Bots: their settings as stored, read by every request (cached per TTL), and the writes of the bot CLI's commands (flows/bot-admin.ts).
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, optional, queryAll, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { config } from '../shared/config';
import { keys } from './keys';
import { TtlCache } from '../shared/cache';

export interface Widget {
  primary_color: string;
  multiple_chats: boolean;
  attachments: boolean;
}

export interface Bot {
  id: string;
  name: string;
  client_key: string;
  /** SHA-256 (hex) of the secret key; the key itself is shown once and never stored. */
  secret_hash: string;
  enabled: boolean;
  client_api_enabled: boolean;
  allowed_origins: string[];
  widget: Widget;
  /** Where user messages are POSTed (signed with webhook_secret); absent: no webhooks. */
  webhook_url?: string;
  webhook_secret?: string;
  /** Identity verification: sessions with an external_id must prove it with HMAC-SHA256(identity_secret, external_id). */
  identity_secret?: string;
  /** With identity verification: refuse anonymous visitors (sessions without an external_id) too. */
  require_identity?: boolean;
  /** Replies left unread this long (1-900 s) give the webhook one chat.unread_reminder per burst; absent: off. */
  unread_reminder_seconds?: number;
  /** Messages and files are kept this many days (1-3650), then expire (policies/retention.ts); absent: for ever. */
  retention_days?: number;
  /** When retention_days was last set (even to the same value): each time, a retention task re-dates what is stored. */
  retention_set_at?: string;
  created_at: string;
  updated_at: string;
}

export const DEFAULT_WIDGET: Widget = { primary_color: '#2563eb', multiple_chats: false, attachments: true };

const botCache = new TtlCache<Bot | undefined>(() => config().botCacheTtlMs);
const clientKeyCache = new TtlCache<string | undefined>(() => config().botCacheTtlMs);

/** The codec: a bot item as DynamoDB (or its stream) gives it, its keys left behind. */
export const botFromItem = (raw: RawItem): Bot => {
  const item = raw as Stored<Bot>;
  return {
    id: item.id,
    name: item.name,
    client_key: item.client_key,
    secret_hash: item.secret_hash,
    enabled: item.enabled,
    client_api_enabled: item.client_api_enabled,
    allowed_origins: item.allowed_origins,
    widget: item.widget,
    ...optional(item, 'webhook_url', 'webhook_secret', 'identity_secret', 'require_identity', 'unread_reminder_seconds', 'retention_days', 'retention_set_at'),
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
};

/** A client key's item: the bot it opens. */
const clientKeyFromItem = (raw: RawItem): { bot_id: string } => ({ bot_id: (raw as Stored<{ bot_id: string }>).bot_id });

const botItem = (bot: Bot) => ({ ...keys.bot(bot.id), entity: 'bot', gsi1pk: keys.botsIndex, gsi1sk: bot.created_at, ...bot });

export function getBot(botId: string): Promise<Bot | undefined> {
  return botCache.get(botId, async () => {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.bot(botId) }));
    return out.Item && botFromItem(out.Item);
  });
}

export async function getBotByClientKey(clientKey: string): Promise<Bot | undefined> {
  const botId = await clientKeyCache.get(clientKey, async () => {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.clientKey(clientKey) }));
    return out.Item && clientKeyFromItem(out.Item).bot_id;
  });
  return botId ? getBot(botId) : undefined;
}

/** Reads a bot without the cache (admin use). */
export async function readBot(botId: string): Promise<Bot | undefined> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.bot(botId), ConsistentRead: true }),
  );
  return out.Item && botFromItem(out.Item);
}

export async function listBots(): Promise<Bot[]> {
  const items = await queryAll({ IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': keys.botsIndex } });
  return items.map(botFromItem);
}

/** A new bot and its client key's item, in one transaction: neither exists without the other. */
export async function putNewBot(bot: Bot): Promise<void> {
  await dynamo.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: tableName(), Item: botItem(bot), ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.clientKey(bot.client_key), entity: 'client_key', bot_id: bot.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    }),
  );
}

/** Replaces the bot with `next`; optimistic concurrency: the put only lands on the version read (its updated_at). */
export async function replaceBot(next: Bot, readUpdatedAt: string): Promise<void> {
  await dynamo.send(
    new PutCommand({
      TableName: tableName(),
      Item: botItem(next),
      ConditionExpression: 'updated_at = :read',
      ExpressionAttributeValues: { ':read': readUpdatedAt },
    }),
  );
}
