// Authenticates requests: a client's Bearer session token (→ user and bot, the bot's switches checked), or
// a bot's Bearer secret key (Bot API).
import { botForSecretKey, openBotOfToken, type Bot } from '../domain/bots';
import { resolveBotChat, type ChatOwner } from '../domain/chats';
import { UnauthenticatedError } from '../shared/errors';
import type { HttpRequest } from './http';
import { verifyToken } from '../domain/tokens';

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

/** Bot API on one chat: its owner, for this bot only (another bot's chat is a 404). */
export async function botChatOwner(req: HttpRequest, bot: Bot, chatId: string): Promise<ChatOwner> {
  const owner = await resolveBotChat(bot.id, chatId);
  req.logKeys.user_id = owner.userId;
  return owner;
}

export async function authenticate(req: HttpRequest): Promise<Caller> {
  const { userId, botId, externalId } = await verifyToken('session', bearerToken(req));
  Object.assign(req.logKeys, { bot_id: botId, user_id: userId });
  const bot = await openBotOfToken('session', botId);
  return { userId, botId, externalId, bot };
}
