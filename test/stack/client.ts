// What a user of the service has: HTTP to the Client API (client_key, session token) and to the Bot API (the
// bot's secret key), and the `centrifuge` client over `ws`. Every POST that creates something is written to
// the run's ledger, so the teardown can say what the run left behind.
import { call, type CallOptions, type Reply } from '../support/http';
import type { BodyOf } from '../support/paths';
import { liveClient, type LiveClient } from '../support/realtime';
import { realtimeOf, type Session } from '../support/contract';

export type { Session, User } from '../support/contract';
import { record, target } from './target';

export const T = target();

export type Options = Omit<CallOptions, 'base'>;

/** Writes to the ledger what a successful POST created (a replayed send, 200, created nothing). */
export function noteCreated(method: string, path: string, res: Reply<unknown>): void {
  if (method !== 'POST') return;
  const p = path.split('?')[0];
  if (p === '/api/client/session' && res.status === 200) record('user', idOf(field(res.body, 'user')));
  else if (p === '/api/client/chats' && res.status === 201) record('chat', idOf(res.body));
  else if (p.endsWith('/messages') && res.status === 201) record('message', idOf(res.body));
  else if (p.endsWith('/files') && res.status === 201) record('file', idOf(res.body));
}

const field = (body: unknown, name: string): unknown => (typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined);
const idOf = (body: unknown): string => String(field(body, 'id'));

/** A Client API call: `path` is under /api/client; its reply is typed as call()'s is, or as the `B` given. */
export function client<M extends string, U extends string>(method: M, path: U, opts?: Options): Promise<Reply<BodyOf<M, `/api/client${U}`>>>;
export function client<B>(method: string, path: string, opts?: Options): Promise<Reply<B>>;
export async function client(method: string, path: string, opts: Options = {}): Promise<Reply<unknown>> {
  const full = `/api/client${path}`;
  const res = await call<unknown>(method, full, { ...opts, base: T.apiUrl });
  noteCreated(method, full, res);
  return res;
}

/** A Bot API call with the bot's secret key (or `secret`): `path` is under /api/bot; typed as client() is. */
export function botApi<M extends string, U extends string>(method: M, path: U, opts?: Options, secret?: string): Promise<Reply<BodyOf<M, `/api/bot${U}`>>>;
export function botApi<B>(method: string, path: string, opts?: Options, secret?: string): Promise<Reply<B>>;
export async function botApi(method: string, path: string, opts: Options = {}, secret = T.secretKey): Promise<Reply<unknown>> {
  const full = `/api/bot${path}`;
  const res = await call<unknown>(method, full, { ...opts, base: T.apiUrl, headers: { ...opts.headers, authorization: `Bearer ${secret}` } });
  noteCreated(method, full, res);
  return res;
}

/** The run's external id for a named test user: only ids the run can recognise are ever created. */
export const ext = (name: string): string => `${T.prefix}${name}`;

export const originHeader = (): Record<string, string> => (T.origin ? { origin: T.origin } : {});

export async function openSession(name: string, extra: Record<string, unknown> = {}): Promise<Session> {
  const res = await client<Session>('POST', '/session', {
    json: { client_key: T.clientKey, external_id: ext(name), ...extra },
    headers: originHeader(),
  });
  if (res.status !== 200) throw new Error(`POST /session for ${ext(name)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The contract's single-chat convention: list the chats, create one when there is none, then use that one. */
export async function conventionalChat(token: string, name = 'Support'): Promise<string> {
  const list = await client('GET', '/chats', { token });
  if (list.status !== 200) throw new Error(`GET /chats: ${list.status} ${JSON.stringify(list.body)}`);
  if (list.body.length > 0) return list.body[0].id;
  const made = await client('POST', '/chats', { token, json: { name } });
  if (made.status !== 201) throw new Error(`POST /chats: ${made.status} ${JSON.stringify(made.body)}`);
  return made.body.id;
}

/** A fresh user of the bot (named by the run's prefix) with its one chat. */
export async function userWithChat(name: string) {
  const session = await openSession(name);
  const token = session.session_token;
  return { session, token, chatId: await conventionalChat(token) };
}

export const say = (token: string, chatId: string, content: string, extra: Record<string, unknown> = {}) =>
  client('POST', `/chats/${chatId}/messages`, { token, json: { content, content_type: 'text', ...extra } });

/** The session's realtime connection (REALTIME_URL, when set, replaces the block's URL). */
export async function live(session: Session): Promise<LiveClient> {
  const rt = realtimeOf(session);
  // A URL given in the environment gets the session's token, as the session's own URL carries it.
  const url = T.realtimeUrl ? new URL(T.realtimeUrl) : undefined;
  url?.searchParams.set('token', rt.token);
  return liveClient({ ...rt, url: url?.href ?? rt.url });
}

export { sleep } from '../support/wait';
