// Authenticates a client request: Bearer session token → user and bot, with the bot's switches checked.
import { assertClientApiOpen, getBot, type Bot } from './bots';
import { UnauthorizedError } from './errors';
import type { HttpRequest } from './http';
import { verifyToken } from './tokens';

export interface Caller {
  userId: string;
  botId: string;
  bot: Bot;
}

const MAX_TOKEN_LENGTH = 4096;

export function bearerToken(req: HttpRequest): string {
  const header = req.header('authorization');
  if (!header) throw new UnauthorizedError('Missing Authorization: Bearer <session_token> header');
  const match = /^Bearer +([^ ]+) *$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) {
    throw new UnauthorizedError('Authorization header must be "Bearer <session_token>"');
  }
  return match[1];
}

export async function authenticate(req: HttpRequest): Promise<Caller> {
  const { userId, botId } = await verifyToken('session', bearerToken(req));
  const bot = assertClientApiOpen(await getBot(botId));
  return { userId, botId, bot };
}
