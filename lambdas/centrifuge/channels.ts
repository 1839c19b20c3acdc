// Channels and the session's realtime block (kept apart from the socket code so session creation stays small).
import { config } from '../shared/config';
import { isUuid } from '../shared/ids';
import { signToken, type TokenClaims } from '../adapters/tokens';

const CHANNEL_PREFIX = 'nexus:user#';
export const userChannel = (userId: string): string => CHANNEL_PREFIX + userId;

/** The user a channel belongs to, or undefined for anything that is not a user channel. */
export function channelUser(channel: unknown): string | undefined {
  if (typeof channel !== 'string' || !channel.startsWith(CHANNEL_PREFIX)) return undefined;
  const userId = channel.slice(CHANNEL_PREFIX.length);
  return isUuid(userId) ? userId : undefined;
}

export interface RealtimeBlock {
  provider: 'centrifugo';
  url: string;
  token: string;
  channel: string;
}

/**
 * The session's realtime block, or undefined when realtime is off for this environment. The URL carries the
 * realtime token too (`?token=`): $connect refuses a socket without a valid one before it opens, and a
 * browser's WebSocket can send no header to carry it.
 */
export async function realtimeBlock(claims: TokenClaims, expiresAt: Date): Promise<RealtimeBlock | undefined> {
  const base = config().realtimeUrl;
  if (!base) return undefined;
  const token = await signToken('realtime', claims, expiresAt);
  return { provider: 'centrifugo', url: withToken(base, token), token, channel: userChannel(claims.userId) };
}

/** The realtime URL with this token as its `token` query parameter (replacing any). */
export function withToken(url: string, token: string): string {
  const u = new URL(url);
  u.searchParams.set('token', token);
  return u.toString();
}
