// The bot CLI's commands (bin/bot.ts): a bot made with fresh keys, its settings changed and its secrets rotated.
import { randomBytes } from 'node:crypto';
import { config } from '../shared/config';
import { InvalidInputError, NotFoundError } from '../shared/errors';
import { newUuid } from '../shared/ids';
import { DEFAULT_WIDGET, putNewBot, readBot, replaceBot, type Bot, type Widget } from '../entities/bots';
import { hashSecret, newSecretKey } from '../policies/bot-access';
import { checkRetention } from '../policies/retention';
import { checkWebhookUrl } from '../adapters/webhook-target';

const randomToken = (prefix: string, bytes: number): string => prefix + randomBytes(bytes).toString('hex');

/** A secret that exists while its feature is on: kept, made when missing or rotated, dropped when off. */
const secretWhile = (on: boolean, current: string | undefined, rotate: boolean | undefined, prefix: string) =>
  !on ? undefined : rotate || !current ? randomToken(prefix, 32) : current;

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
  await putNewBot(bot);
  return { bot, secretKey };
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
  await replaceBot(next, current.updated_at);
  return { bot: next, secretKey };
}
