// Bots: settings read by every request (cached per TTL) and the admin operations the bot CLI uses.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, queryAll, tableName } from '../aws/dynamo';
import { config } from '../shared/config';
import { ForbiddenError, InvalidInputError, NotFoundError, UnauthenticatedError } from '../shared/errors';
import { keys } from './keys';
import { TtlCache } from '../shared/cache';
import { newUuid } from '../shared/ids';
import { checkRetention } from './retention';
import { checkWebhookUrl } from './webhook-target';

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
  /** Messages and files are kept this many days (1-3650), then expire (domain/retention.ts); absent: for ever. */
  retention_days?: number;
  /** When retention_days was last set (even to the same value): each time, a retention task re-dates what is stored. */
  retention_set_at?: string;
  created_at: string;
  updated_at: string;
}

export const DEFAULT_WIDGET: Widget = { primary_color: '#2563eb', multiple_chats: false, attachments: true };

const botCache = new TtlCache<Bot | undefined>(() => config().botCacheTtlMs);
const clientKeyCache = new TtlCache<string | undefined>(() => config().botCacheTtlMs);

function stripKeys(item: Record<string, unknown> | undefined): Bot | undefined {
  if (!item) return undefined;
  const { pk: _pk, sk: _sk, entity: _e, gsi1pk: _g1, gsi1sk: _g2, ...bot } = item;
  return bot as unknown as Bot;
}

export function getBot(botId: string): Promise<Bot | undefined> {
  return botCache.get(botId, async () => {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.bot(botId) }));
    return stripKeys(out.Item);
  });
}

export async function getBotByClientKey(clientKey: string): Promise<Bot | undefined> {
  const botId = await clientKeyCache.get(clientKey, async () => {
    const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.clientKey(clientKey) }));
    return out.Item?.bot_id as string | undefined;
  });
  return botId ? getBot(botId) : undefined;
}

/**
 * Identity verification (opt-in per bot): a session for an external_id needs external_id_hash = hex
 * HMAC-SHA256(identity_secret, external_id), compared in constant time; `require_identity` also refuses
 * anonymous visitors. Without an identity secret the contract's behaviour is unchanged.
 */
export function assertIdentity(bot: Bot, externalId: string | undefined, hash: string | undefined): void {
  if (!bot.identity_secret) return;
  if (externalId === undefined) {
    if (bot.require_identity) throw new ForbiddenError('This bot only accepts verified users: send external_id with external_id_hash');
    return;
  }
  if (!hash) throw new ForbiddenError('external_id_hash is required: this bot verifies user identities');
  const expected = createHmac('sha256', bot.identity_secret).update(externalId).digest();
  const wellFormed = /^[0-9a-f]{64}$/i.test(hash);
  // Compared in constant time either way (a malformed hash as zeros), never with ==.
  const matches = timingSafeEqual(wellFormed ? Buffer.from(hash, 'hex') : Buffer.alloc(32), expected);
  if (!matches || !wellFormed) {
    throw new ForbiddenError('external_id_hash does not match external_id');
  }
}

/**
 * The bot of a verified session or realtime token, open to its users. A bot that no longer exists leaves the
 * token naming nothing: unauthenticated (a 404 is only for an unknown client_key).
 */
export async function openBotOfToken(kind: 'session' | 'realtime', botId: string): Promise<Bot> {
  const bot = await getBot(botId);
  if (!bot) throw new UnauthenticatedError(`The ${kind} token names a bot that no longer exists`);
  return assertClientApiOpen(bot);
}

/** Whether the bot (cached, as every function reads it) still serves its users: on, its client interface enabled. */
export async function clientInterfaceOpen(botId: string): Promise<boolean> {
  const bot = await getBot(botId);
  return Boolean(bot?.enabled && bot.client_api_enabled);
}

/** The checks every client request makes on its bot (contract: turned off / client interface disabled → 403). */
export function assertClientApiOpen(bot: Bot | undefined): Bot {
  if (!bot) throw new NotFoundError('Bot not found');
  if (!bot.enabled) throw new ForbiddenError('The bot is turned off');
  if (!bot.client_api_enabled) throw new ForbiddenError('The client interface is disabled for this bot');
  return bot;
}

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');
const randomToken = (prefix: string, bytes: number): string => prefix + randomBytes(bytes).toString('hex');

/**
 * Secret keys carry their bot's id (`sk_<bot id, 32 hex><48 random hex>`), so authenticating one is a
 * cached bot read plus a constant-time hash comparison: no lookup item, no extra round trip.
 */
const SECRET_KEY_RE = /^sk_([0-9a-f]{32})([0-9a-f]{48})$/;
const newSecretKey = (botId: string): string => `sk_${botId.replace(/-/g, '')}${randomBytes(24).toString('hex')}`;
const botIdOfKey = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** A secret that exists while its feature is on: kept, made when missing or rotated, dropped when off. */
const secretWhile = (on: boolean, current: string | undefined, rotate: boolean | undefined, prefix: string) =>
  !on ? undefined : rotate || !current ? randomToken(prefix, 32) : current;

/** The Bot API's authentication: the bot whose secret key this is, or 401. */
export async function botForSecretKey(secretKey: string): Promise<Bot> {
  const m = SECRET_KEY_RE.exec(secretKey);
  if (!m) throw new UnauthenticatedError('Invalid bot secret key');
  const bot = await getBot(botIdOfKey(m[1]));
  const given = Buffer.from(hashSecret(secretKey), 'hex');
  // Compared in constant time, and against a dummy when the bot is unknown, so timing tells nothing.
  const stored = Buffer.from(bot?.secret_hash ?? '0'.repeat(64), 'hex');
  if (!timingSafeEqual(given, stored) || !bot) throw new UnauthenticatedError('Invalid bot secret key');
  if (!bot.enabled) throw new ForbiddenError('The bot is turned off');
  return bot;
}

export interface BotSettings {
  name?: string;
  enabled?: boolean;
  client_api_enabled?: boolean;
  allowed_origins?: string[];
  widget?: Partial<Widget>;
  /** A URL sets the webhook (and makes a webhook secret when there is none); null removes it. */
  webhook_url?: string | null;
  /** Turns identity verification on (makes an identity secret when there is none) or off (drops it). */
  identity_verification?: boolean;
  require_identity?: boolean;
  /** Seconds (1-900) before an unread reply gives a reminder; null turns reminders off. */
  unread_reminder_seconds?: number | null;
  /** Days (1-3650) messages and files are kept; null keeps them for ever. */
  retention_days?: number | null;
}

/** The longest a reminder can wait: SQS's longest delay (15 minutes). */
export const MAX_REMINDER_SECONDS = 900;

function checkReminder(seconds: number | null | undefined): void {
  if (seconds === undefined || seconds === null) return;
  if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= MAX_REMINDER_SECONDS)) {
    throw new InvalidInputError(`unread_reminder_seconds must be a whole number of seconds from 1 to ${MAX_REMINDER_SECONDS}, or off: ${seconds}`);
  }
}

/** What a new bot can be made with; switches, webhooks and identity verification are set by updateBot. */
export type NewBotSettings = Pick<BotSettings, 'allowed_origins' | 'widget' | 'unread_reminder_seconds' | 'retention_days'> & { name: string };

/** Creates a bot with a fresh client key and secret key; the secret key is returned once and stored hashed. */
export async function createBot(settings: NewBotSettings): Promise<{ bot: Bot; secretKey: string }> {
  checkReminder(settings.unread_reminder_seconds);
  checkRetention(settings.retention_days);
  const now = new Date().toISOString();
  const id = newUuid();
  const secretKey = newSecretKey(id);
  const bot: Bot = {
    id,
    name: settings.name,
    client_key: randomToken('cli_', 16),
    secret_hash: hashSecret(secretKey),
    enabled: true,
    client_api_enabled: true,
    allowed_origins: settings.allowed_origins ?? [],
    widget: { ...DEFAULT_WIDGET, ...settings.widget },
    ...(settings.unread_reminder_seconds && { unread_reminder_seconds: settings.unread_reminder_seconds }),
    ...(settings.retention_days && { retention_days: settings.retention_days }),
    created_at: now,
    updated_at: now,
  };
  await dynamo.send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.bot(bot.id), entity: 'bot', gsi1pk: keys.botsIndex, gsi1sk: bot.created_at, ...bot },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
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
  return { bot, secretKey };
}

/** Reads a bot without the cache (admin use). */
export async function readBot(botId: string): Promise<Bot | undefined> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.bot(botId), ConsistentRead: true }),
  );
  return stripKeys(out.Item);
}

/** Secrets that rotate: the Bot API key and the webhook signing secret. */
export interface Rotation {
  secretKey?: boolean;
  webhookSecret?: boolean;
  identitySecret?: boolean;
}

export async function updateBot(botId: string, settings: BotSettings, rotate: Rotation = {}): Promise<{ bot: Bot; secretKey?: string }> {
  checkReminder(settings.unread_reminder_seconds);
  checkRetention(settings.retention_days);
  if (typeof settings.webhook_url === 'string') await checkWebhookUrl(settings.webhook_url, config().webhookAllowLoopback);
  const current = await readBot(botId);
  if (!current) throw new NotFoundError(`Bot ${botId} not found`);
  const secretKey = rotate.secretKey ? newSecretKey(botId) : undefined;
  const webhookOn = settings.webhook_url !== undefined ? settings.webhook_url !== null : Boolean(current.webhook_url);
  const identityOn = settings.identity_verification ?? Boolean(current.identity_secret);
  if (rotate.webhookSecret && !webhookOn) throw new NotFoundError(`Bot ${botId} has no webhook_url to sign for`);
  if (rotate.identitySecret && !identityOn) throw new NotFoundError(`Bot ${botId} has no identity verification to rotate`);
  const now = new Date().toISOString();
  const next: Bot = {
    ...current,
    ...(settings.name !== undefined && { name: settings.name }),
    ...(settings.enabled !== undefined && { enabled: settings.enabled }),
    ...(settings.client_api_enabled !== undefined && { client_api_enabled: settings.client_api_enabled }),
    ...(settings.allowed_origins !== undefined && { allowed_origins: settings.allowed_origins }),
    ...(secretKey && { secret_hash: hashSecret(secretKey) }),
    webhook_url: settings.webhook_url !== undefined ? (settings.webhook_url ?? undefined) : current.webhook_url,
    webhook_secret: secretWhile(webhookOn, current.webhook_secret, rotate.webhookSecret, 'whsec_'),
    identity_secret: secretWhile(identityOn, current.identity_secret, rotate.identitySecret, 'idsec_'),
    require_identity: settings.require_identity ?? current.require_identity ?? false,
    unread_reminder_seconds:
      settings.unread_reminder_seconds !== undefined ? (settings.unread_reminder_seconds ?? undefined) : current.unread_reminder_seconds,
    // Set (changed or not), it re-dates what the bot has stored: the stream's record of this put starts a retention task.
    retention_days: settings.retention_days !== undefined ? (settings.retention_days ?? undefined) : current.retention_days,
    retention_set_at: settings.retention_days !== undefined ? now : current.retention_set_at,
    widget: { ...current.widget, ...settings.widget },
    updated_at: now,
  };
  // Optimistic concurrency: the put only lands on the version we read.
  await dynamo.send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...keys.bot(botId), entity: 'bot', gsi1pk: keys.botsIndex, gsi1sk: next.created_at, ...next },
      ConditionExpression: 'updated_at = :read',
      ExpressionAttributeValues: { ':read': current.updated_at },
    }),
  );
  return { bot: next, secretKey };
}

export async function listBots(): Promise<Bot[]> {
  const items = await queryAll({ IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :p', ExpressionAttributeValues: { ':p': keys.botsIndex } });
  return items.map((item) => stripKeys(item) as Bot);
}

