// The ONE way in for a request: per caller kind (client session, bot secret key; realtime tokens in
// ./realtime.ts) a builder that turns the credential and the route's declared scope (./declarations.ts, from
// lib/routes.ts) into a typed Scope that has passed every rule: the token or key verified, the bot open and its
// switches, the user not erased, the chat the caller's where the route names one. The scope carries what follows
// from the bot (its retention window, its webhook marks) so no handler builds them. Transport-neutral: the HTTP
// wrapper (lambdas/http/scoped.ts) hands in the credential, the chat id, and where a check may run beside the
// route's reads (`Transport`).
//
// Where the erasure check runs is decided here, from the declaration, so the round trips stay those of the
// route: beside the reads of a route that only reads (with the user's read budget), before the first write of
// one that creates, inside the chat's BatchGetItem of one that writes to a chat. Building happens in two steps
// (`admit…`, then `…Scope` once the route's input is parsed) so that a route's input is validated where it
// always was: after the credential, before the chat.
import { botForSecretKey, openBotOfToken } from '../policies/bot-access';
import type { Bot } from '../entities/bots';
import { resolveBotChat, type ChatItem, type ChatOwner } from '../entities/chats';
import { webhookMarks, type WebhookMarks } from '../flows/send';
import { consumeRate } from '../policies/rate';
import { retentionWindow, type RetentionWindow } from '../policies/retention';
import { assertNotRevoked, isRevoked, ownChat } from '../policies/revocation';
import { verifyToken } from '../adapters/tokens';
import { NotFoundError } from '../shared/errors';
import { config } from '../shared/config';
import type { BotScopeName, ScopeName, SessionScopeName } from './declarations';

/** What follows from the caller's bot, built once per request. */
export interface BotSettingsScope {
  botId: string;
  bot: Bot;
  /** What a read may still return: the bot's retention as of this request. */
  window: RetentionWindow;
  /** How a send is marked for the webhook dispatcher's stream filter. */
  marks: WebhookMarks;
}

export interface PublicScope {
  kind: 'public';
}

/** A client's session: its user (not erased) of an open bot. */
export interface SessionScope extends BotSettingsScope {
  kind: 'session';
  userId: string;
  externalId?: string;
  /** The user as the owner of the chats it writes to. */
  owner: ChatOwner;
}

/** …on one chat of the path; its reads stay in the user's own partition (history.ts). */
export interface SessionChatScope extends SessionScope {
  chatId: string;
}

/** …on one chat of the user's, read (strongly consistent) with the erasure check. */
export interface OwnChatScope extends SessionChatScope {
  chat: ChatItem;
}

/** A bot's secret key, the bot on. */
export interface BotScope extends BotSettingsScope {
  kind: 'bot';
}

/** …on one chat of that bot: its owner (for a route that creates, not being erased). */
export interface BotChatScope extends BotScope {
  chatId: string;
  owner: ChatOwner;
}

export type ScopeOf<N extends ScopeName> = N extends 'public'
  ? PublicScope
  : N extends 'session:read' | 'session:create'
    ? SessionScope
    : N extends 'session-chat:read'
      ? SessionChatScope
      : N extends 'session-chat:update' | 'session-chat:create'
        ? OwnChatScope
        : N extends 'bot'
          ? BotScope
          : N extends `bot-chat:${string}`
            ? BotChatScope
            : never;

/** What the transport lends a builder. */
export interface Transport {
  /** Runs a check beside the route's own reads: the transport answers only once it passed (its error wins). */
  beside: (check: Promise<void>) => void;
  /** Who the caller is, as soon as it is known (the request's log line carries it, refused or not). */
  identified: (ids: { botId: string; userId?: string }) => void;
}

function botSettings(bot: Bot): BotSettingsScope {
  return { botId: bot.id, bot, window: retentionWindow(bot), marks: webhookMarks(bot) };
}

/** Step 1 of a session scope: the token and its bot, and the erasure check where the declaration puts it first. */
export async function admitSession(name: SessionScopeName, token: string, { beside, identified }: Transport): Promise<SessionScope> {
  const { userId, botId, externalId } = await verifyToken('session', token);
  identified({ botId, userId });
  const bot = await openBotOfToken('session', botId);
  const scope: SessionScope = { kind: 'session', userId, externalId, owner: { userId, botId, externalId }, ...botSettings(bot) };
  if (name === 'session:read' || name === 'session-chat:read') {
    // Beside the reads: no added wait; one read budget for every client read.
    beside(assertNotRevoked(userId));
    beside(consumeRate({ name: 'reads', subject: userId, perMinute: config().limits.readsPerMinute }));
  } else if (name === 'session:create') {
    await assertNotRevoked(userId); // before the first write: a refused request writes nothing
  }
  // session-chat:update and :create: the check rides in the chat's read (sessionChatScope).
  return scope;
}

/** Step 2 of a session scope on a chat: the chat the user's own (401 erased, 403 another user's, 404 unknown). */
export async function sessionChatScope(name: 'session-chat:read', admitted: SessionScope, chatId: string): Promise<SessionChatScope>;
export async function sessionChatScope(name: 'session-chat:update' | 'session-chat:create', admitted: SessionScope, chatId: string): Promise<OwnChatScope>;
export async function sessionChatScope(name: SessionScopeName, admitted: SessionScope, chatId: string): Promise<SessionChatScope | OwnChatScope> {
  if (name === 'session-chat:read') return { ...admitted, chatId };
  if (name !== 'session-chat:update' && name !== 'session-chat:create') throw new Error(`${name} names no chat`);
  return { ...admitted, chatId, chat: await ownChat(admitted.userId, chatId) };
}

/** Step 1 of a bot scope: the secret key (401) of a bot that is on (403). */
export async function admitBot(secretKey: string, { identified }: Pick<Transport, 'identified'>): Promise<BotScope> {
  const bot = await botForSecretKey(secretKey);
  identified({ botId: bot.id });
  return { kind: 'bot', ...botSettings(bot) };
}

/** Step 2 of a bot scope on a chat: one of this bot's (404 otherwise); a route that creates, its user not being erased (404). */
export async function botChatScope(name: BotScopeName, admitted: BotScope, chatId: string, { identified }: Pick<Transport, 'identified'>): Promise<BotChatScope> {
  if (name === 'bot') throw new Error('bot names no chat');
  const owner = await resolveBotChat(admitted.botId, chatId);
  identified({ botId: owner.botId, userId: owner.userId });
  if (name === 'bot-chat:create' && (await isRevoked(owner.userId))) throw new NotFoundError('Chat not found: its user has been erased');
  return { ...admitted, chatId, owner };
}
