// Every HTTP entry point is made here: `scoped(<the route's declared scope>, …)` takes the credential from the
// request (the Bearer session token or secret key), the chat from the path (or the input), and hands the
// handler the Scope built by lambdas/access; the handler never authenticates. Each handler is tagged with its
// scope, and test/e2e/scopes.test.ts checks the tag against the route table (lib/routes.ts) for every route.
import { admitBot, admitSession, botChatScope, sessionChatScope, type ScopeOf, type Transport } from '../access/scopes';
import { namesChat, type HttpScopeName } from '../access/declarations';
import { UnauthenticatedError } from '../shared/errors';
import { httpHandler, type Handler, type HttpReply, type HttpRequest } from './http';
import { chatIdParam } from './params';

const MAX_TOKEN_LENGTH = 4096;

export function bearerToken(req: HttpRequest, what: 'session_token' | 'secret_key'): string {
  const header = req.header('authorization');
  if (!header) throw new UnauthenticatedError(`Missing Authorization: Bearer <${what}> header`);
  const match = /^Bearer +([^ ]+) *$/i.exec(header);
  if (!match || match[1].length > MAX_TOKEN_LENGTH) {
    throw new UnauthenticatedError(`Authorization header must be "Bearer <${what}>"`);
  }
  return match[1];
}

/** An entry point's handler, with the scope it was made for (the route table must declare the same). */
export type ScopedHandler = Handler & { readonly scope: HttpScopeName };

export interface Spec<I> {
  /** The route's input, parsed (400 on bad input) after the credential and before the chat is checked. */
  input?: (req: HttpRequest) => I | Promise<I>;
  /** Where a chat route's chat id is, when not the `{chat_id}` of the path (a form or JSON field of the input). */
  chatId?: (input: I) => string;
}

type Run<N extends HttpScopeName, I> = (scope: ScopeOf<N>, input: I, req: HttpRequest) => Promise<HttpReply>;

export function scoped<N extends HttpScopeName>(name: N, run: Run<N, undefined>): ScopedHandler;
export function scoped<N extends HttpScopeName, I>(name: N, spec: Spec<I>, run: Run<N, I>): ScopedHandler;
export function scoped<N extends HttpScopeName, I>(name: N, specOrRun: Spec<I> | Run<N, I>, maybeRun?: Run<N, I>): ScopedHandler {
  const [spec, run] = typeof specOrRun === 'function' ? [{} as Spec<I>, specOrRun] : [specOrRun, maybeRun as Run<N, I>];
  const handler = httpHandler(async (req) => {
    const admitted = await admit(name, req);
    // A chat of the path is a parameter like any other: checked (400) before the input, as it always was.
    const pathChat = namesChat(name) && !spec.chatId ? chatIdParam(req) : undefined;
    const input = (spec.input ? await spec.input(req) : undefined) as I;
    let scope: unknown = admitted;
    if (namesChat(name)) {
      const chatId = pathChat ?? (spec.chatId as (input: I) => string)(input);
      scope = name.startsWith('session')
        ? await sessionChatScope(name as 'session-chat:create', admitted as ScopeOf<'session:read'>, chatId)
        : await botChatScope(name as 'bot-chat:read', admitted as ScopeOf<'bot'>, chatId, transport(req));
    }
    return run(scope as ScopeOf<N>, input, req);
  });
  return Object.assign(handler, { scope: name });
}

const transport = (req: HttpRequest): Transport => ({
  beside: (check) => req.guard(check),
  identified: ({ botId, userId }) => Object.assign(req.logKeys, { bot_id: botId }, userId && { user_id: userId }),
});

/** Step 1, by caller kind: the credential of the request. */
async function admit(name: HttpScopeName, req: HttpRequest): Promise<unknown> {
  if (name === 'public') return { kind: 'public' };
  if (name.startsWith('session')) return admitSession(name as 'session:read', bearerToken(req, 'session_token'), transport(req));
  if (name.startsWith('bot')) return admitBot(bearerToken(req, 'secret_key'), transport(req));
  throw new Error(`${name as string} is not an HTTP scope`);
}
