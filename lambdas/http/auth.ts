// Authenticates requests: a client's Bearer session token (→ user and bot, the bot's switches checked), or
// a bot's Bearer secret key (Bot API).
import { botForSecretKey, openBotOfToken } from '../policies/bot-access';
import { type Bot } from '../entities/bots';
import { resolveBotChat, type ChatOwner } from '../entities/chats';
import { NotFoundError, UnauthenticatedError } from '../shared/errors';
import type { HttpRequest } from './http';
import { verifyToken } from '../adapters/tokens';
import { assertNotRevoked, isRevoked } from '../policies/revocation';
import { consumeRate } from '../policies/rate';
import { config } from '../shared/config';

export interface Caller {
  userId: string;
  botId: string;
  externalId?: string;
  bot: Bot;
}

const MAX_TOKEN_LENGTH = 4096;

export function bearerToken(req: HttpRequest, what = 'session_token'): string {
  const header = req.header('authorization');
  if (!header) throw new UnauthenticatedError(`Missing Authorization: Bearer <${what}> header`);
  const match = /^Bearer +([^ ]+) *$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) {
    throw new UnauthenticatedError(`Authorization header must be "Bearer <${what}>"`);
  }
  return match[1];
}

/** Bot API: the bot whose secret key is in the Authorization header. */
export async function authenticateBot(req: HttpRequest): Promise<Bot> {
  const bot = await botForSecretKey(bearerToken(req, 'secret_key'));
  req.logKeys.bot_id = bot.id;
  return bot;
}

/**
 * Bot API on one chat: its owner, for this bot only (another bot's chat is a 404). `creates`: the request may
 * write a new item for the chat (a message, a file, typing), so a chat whose user is being erased is a 404 too
 * (what it wrote could outlive the erasure).
 */
export async function botChatOwner(req: HttpRequest, bot: Bot, chatId: string, creates = false): Promise<ChatOwner> {
  const owner = await resolveBotChat(bot.id, chatId);
  req.logKeys.user_id = owner.userId;
  if (creates && (await isRevoked(owner.userId))) throw new NotFoundError('Chat not found: its user has been erased');
  return owner;
}

/**
 * A client request's caller: a valid session token of an open bot, whose user has not been erased. The erasure
 * check is a read made before the handler writes anything (a refused request writes nothing).
 */
export async function authenticate(req: HttpRequest): Promise<Caller> {
  const caller = await verifySession(req);
  await assertNotRevoked(caller.userId);
  return caller;
}

/** A client send or read: its erasure check rides in its own chat read (policies/revocation.ts ownChat). */
export const authenticateSender = verifySession;

/**
 * The same for a handler that only reads: the erasure check and the user's read budget (one counter for every
 * client read) run beside its reads, and the request answers only once both passed (http.ts awaits the
 * guards), so they cost no extra wait.
 */
export async function authenticateReader(req: HttpRequest): Promise<Caller> {
  const caller = await verifySession(req);
  req.guard(assertNotRevoked(caller.userId));
  req.guard(consumeRate({ name: 'reads', subject: caller.userId, perMinute: config().limits.readsPerMinute }));
  return caller;
}

async function verifySession(req: HttpRequest): Promise<Caller> {
  const { userId, botId, externalId } = await verifyToken('session', bearerToken(req));
  Object.assign(req.logKeys, { bot_id: botId, user_id: userId });
  const bot = await openBotOfToken('session', botId);
  return { userId, botId, externalId, bot };
}
