// Who may use a bot: the Bot API by the bot's secret key, its users while its switches are on, identity
// verification of a session's external id.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../shared/errors';
import { getBot, type Bot } from '../entities/bots';

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

/**
 * Secret keys carry their bot's id (`sk_<bot id, 32 hex><48 random hex>`), so authenticating one is a
 * cached bot read plus a constant-time hash comparison: no lookup item, no extra round trip.
 */
const SECRET_KEY_RE = /^sk_([0-9a-f]{32})([0-9a-f]{48})$/;
export const newSecretKey = (botId: string): string => `sk_${botId.replace(/-/g, '')}${randomBytes(24).toString('hex')}`;
const botIdOfKey = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

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
