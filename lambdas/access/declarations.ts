// What access each entry point declares in the route table (lib/routes.ts `scope`): which caller, and whether the
// request reads, updates or creates items. The scope builders (./scopes.ts, ./realtime.ts) derive
// every check and where it runs from this one word.

/**
 * - `public`: no caller (a session is asked for with a client key, checked by the route itself; no route matched).
 * - `session:…`: a client's session token of an open bot, its user not erased. `read`: the erasure check and the
 *   user's read budget run beside the route's reads; `create`: the erasure check runs before anything is written.
 * - `session-chat:…`: the same, on the `{chat_id}` of the path, which must be the user's (403 another user's,
 *   404 unknown). `read`: the history Query reads the user's own partition only (an empty one tells 403 from
 *   404); `update`/`create`: the chat and the erasure check in one strongly consistent BatchGetItem.
 * - `bot`: a bot's secret key, the bot on; `bot-chat:…`: and a chat of that bot (another bot's or unknown: 404);
 *   `create` (a new message, file or typing item): its user not being erased either (404), as what it wrote could
 *   outlive the erasure; `read`/`update` change nothing an erasure would miss.
 * - `realtime`: a realtime token (the protocol's connect and refresh commands): verified, the bot open, the user
 *   not erased. `realtime:handshake` ($connect): verified and not erased; the bot's switches are answered by the
 *   connect command that follows (code 103, which the client acts on; a refused handshake only makes it retry).
 * - `connection`: API Gateway's own notice about a socket ($disconnect), no credentials.
 */
export const SCOPES = [
  'public',
  'session:read',
  'session:create',
  'session-chat:read',
  'session-chat:update',
  'session-chat:create',
  'bot',
  'bot-chat:read',
  'bot-chat:update',
  'bot-chat:create',
  'realtime',
  'realtime:handshake',
  'connection',
] as const;

export type ScopeName = (typeof SCOPES)[number];

/** The scopes an HTTP route may declare (the rest are the WebSocket's). */
export type HttpScopeName = Exclude<ScopeName, 'realtime' | 'realtime:handshake' | 'connection'>;
export type SessionScopeName = Extract<ScopeName, `session${string}`>;
export type BotScopeName = Extract<ScopeName, `bot${string}`>;
export type ChatScopeName = Extract<ScopeName, `${string}-chat:${string}`>;

export const isScopeName = (s: unknown): s is ScopeName => (SCOPES as readonly unknown[]).includes(s);
export const namesChat = (s: ScopeName): s is ChatScopeName => s.includes('-chat:');

/** A route's declaration, checked: what every wrapper and the route-walking test call (a route without one throws). */
export function declaredScope(route: { id: string; scope?: unknown }): ScopeName {
  if (!isScopeName(route.scope)) throw new Error(`Route ${route.id} declares no scope (one of: ${SCOPES.join(', ')})`);
  return route.scope;
}
