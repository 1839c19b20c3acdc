// Every HTTP route of the route table (lib/routes.ts), walked: its declared scope says which refusals it owes, and
// each is asked of it through the running stack: an erased user's token → 401, another user's chat → 403 (the
// Bot API: another bot's chat → 404), a bot turned off → 403, a chat whose user is erased → 404 for a Bot API
// route that creates, a user being erased → the Bot API's contract; each refused request writes nothing (a scan
// of everything of the bot before and after). A route without a scope, or whose handler was made for another
// scope, fails here. The WebSocket routes and commands: scopes-realtime.test.ts.
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NOT_FOUND, ROUTES, WS_ROUTES, type RouteDef } from '../../lib/routes';
import { declaredScope, type ScopeName } from '../../lambdas/access/declarations';
import { botItems, call, newSession, userWithChat } from '../support/api';
import { ROOT } from '../support/local-process';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { revokeUser } from '../../lambdas/policies/revocation';
import { dynamo, tableName } from '../../lambdas/aws/dynamo';
import { keys } from '../../lambdas/entities/keys';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const DECLARED = { name: 'big.png', size: 1000, mime_type: 'image/png' };

function fileForm(chatId?: string): FormData {
  const fd = new FormData();
  if (chatId) fd.append('chat_id', chatId);
  fd.append('file', new Blob([PNG], { type: 'image/png' }), 'p.png');
  return fd;
}

/** A bot with a user (a chat, a reply of the bot side in it, a file, an export task), and around it: another user of the same bot with a chat, another bot with a user and a chat. */
async function world() {
  const me = await userWithChat();
  const bot = { authorization: `Bearer ${me.secretKey}` };
  const reply = await call('POST', `/api/bot/chats/${me.chatId}/messages`, { headers: bot, json: { content: 'hello?', content_type: 'input_select', content_attributes: { items: [{ title: 'Yes', value: 'yes' }] } } });
  const file = await call('POST', '/api/client/files', { token: me.token, body: fileForm() });
  const task = await call('POST', `/api/bot/users/${me.userId}/export`, { headers: bot });
  const neighbour = await newSession(me.bot.client_key);
  const theirs = await call('POST', '/api/client/chats', { token: neighbour.session_token, json: { name: 'theirs' } });
  const otherBot = await userWithChat();
  const neighbourFile = await call('POST', '/api/client/files', { token: neighbour.session_token, body: fileForm() });
  for (const r of [reply, file, task, theirs, neighbourFile]) if (r.status >= 300) throw new Error(`set-up failed: ${r.status} ${JSON.stringify(r.body)}`);
  const mine = { chat_id: me.chatId, user_id: me.userId, message_id: reply.body.id, file_id: file.body.id, task_id: task.body.task_id, external_id: me.session.user.external_id };
  return { me, bot, mine, neighbour: { token: neighbour.session_token, chat_id: theirs.body.id, file_id: neighbourFile.body.id }, otherBot };
}
type World = Awaited<ReturnType<typeof world>>;
type Names = World['mine'];

/** One request of each route, valid for the world it is given: a route the table adds without one here fails. */
const REQUESTS: Record<string, (n: Names, w: World) => { json?: unknown; form?: FormData; query?: string }> = {
  create_session: (n, w) => ({ json: { client_key: w.me.bot.client_key, external_id: n.external_id } }),
  list_chats: () => ({}),
  create_chat: () => ({ json: { name: 'x' } }),
  list_messages: () => ({}),
  create_message: () => ({ json: { content: 'x' } }),
  mark_read: () => ({}),
  answer_message: () => ({ json: { value: 'yes' } }),
  upload_file: () => ({ form: fileForm() }),
  create_upload: () => ({ json: DECLARED }),
  get_file: () => ({}),
  bot_list_chats: () => ({}),
  bot_list_messages: () => ({}),
  bot_create_message: () => ({ json: { content: 'x' } }),
  bot_edit_message: () => ({ json: { content: 'edited' } }),
  bot_typing: () => ({}),
  bot_mark_read: () => ({}),
  bot_upload_file: (n) => ({ form: fileForm(n.chat_id) }),
  bot_create_upload: (n) => ({ json: { ...DECLARED, chat_id: n.chat_id } }),
  bot_find_user: (n) => ({ query: `external_id=${n.external_id}` }),
  bot_get_user: () => ({}),
  bot_delete_user: () => ({}),
  bot_export_user: () => ({}),
  bot_get_task: () => ({}),
};

async function request(route: RouteDef, w: World, names: Names, auth: { token?: string; secretKey?: string }) {
  const make = REQUESTS[route.id];
  if (!make) throw new Error(`no request for route ${route.id}: add one to REQUESTS`);
  const { json, form, query } = make(names, w);
  const path = route.path.replace(/\{(\w+)\}/g, (_, p: keyof Names) => names[p]) + (query ? `?${query}` : '');
  const headers = auth.secretKey ? { authorization: `Bearer ${auth.secretKey}` } : undefined;
  // The route table's method and path are strings, not literals: the body is read as what each case expects.
  return call<unknown>(route.method, path, { token: auth.token, headers, json, body: form });
}

/** A refusal a route owes: how to arrange it, and what the contract answers. */
interface Refusal {
  what: string;
  arrange(w: World): Promise<{ names?: Partial<Names>; auth?: { token?: string; secretKey?: string } } | void>;
  status: number;
  /** Bot ids whose items must be unchanged (default: the world's own bot). */
  scanned?: (w: World) => string[];
  /** A refusal the contract answers with a success (nothing to refuse), checked all the same. */
  body?: (body: unknown, w: World) => void;
}

const botOff = (also: Parameters<typeof updateBot>[1] = {}): Refusal => ({
  what: `bot ${Object.keys(also).length ? 'client interface disabled' : 'turned off'}`,
  arrange: async (w) => void (await updateBot(w.me.bot.id, Object.keys(also).length ? also : { enabled: false })),
  status: 403,
});
const erasedToken: Refusal = { what: "an erased user's token", arrange: async (w) => void (await revokeUser(w.me.userId)), status: 401 };

/** The state a DELETE leaves at once (the task worker is not involved): tokens revoked, the user marked as being erased. */
async function beingErased(w: World): Promise<string> {
  await revokeUser(w.me.userId);
  const task = '00000000-0000-4000-8000-00000000e7a5';
  for (const Key of [keys.userRef(w.me.userId), keys.user(w.me.bot.id, w.mine.external_id)]) {
    await dynamo.send(new UpdateCommand({ TableName: tableName(), Key, UpdateExpression: 'SET erase_task = :t', ExpressionAttributeValues: { ':t': task } }));
  }
  return task;
}

/** What a route's declaration owes, case by case; an undeclared scope throws (the walk fails on it). */
export function refusalsOf(route: { id: string; scope?: unknown; path?: string }): Refusal[] {
  const scope: ScopeName = declaredScope(route);
  const names = route.path ?? '';
  const other = (status: number, pick: (w: World) => Partial<Names>, what: string, scanned?: Refusal['scanned']): Refusal => ({ what, arrange: (w) => Promise.resolve({ names: pick(w) }), status, scanned });
  switch (scope) {
    case 'public':
      return route.id === 'create_session'
        ? [botOff(), botOff({ client_api_enabled: false }), { what: 'a user being erased', arrange: async (w) => void (await beingErased(w)), status: 409 }]
        : [];
    case 'session:read':
    case 'session:create':
      return [erasedToken, botOff(), botOff({ client_api_enabled: false }), ...(names.includes('{file_id}') ? [other(404, (w) => ({ file_id: w.neighbour.file_id }), "another user's file")] : [])];
    case 'session-chat:read':
    case 'session-chat:update':
    case 'session-chat:create':
      return [erasedToken, botOff(), botOff({ client_api_enabled: false }), other(403, (w) => ({ chat_id: w.neighbour.chat_id }), "another user's chat")];
    case 'bot':
      return [
        botOff(),
        ...(names.includes('{user_id}') || route.id === 'bot_find_user' ? [other(404, (w) => ({ user_id: w.otherBot.userId, external_id: w.otherBot.session.user.external_id }), "another bot's user", (w) => [w.me.bot.id, w.otherBot.bot.id]), userBeingErased(route.id)] : []),
        ...(names.includes('{task_id}') ? [other(404, () => ({ task_id: '00000000-0000-4000-8000-000000000000' }), 'a task of no bot of ours')] : []),
      ];
    case 'bot-chat:read':
    case 'bot-chat:update':
    case 'bot-chat:create':
      return [
        botOff(),
        other(404, (w) => ({ chat_id: w.otherBot.chatId }), "another bot's chat", (w) => [w.me.bot.id, w.otherBot.bot.id]),
        // A new item for the chat of a user being erased could outlive the erasure; a read or an update cannot.
        { what: "a chat whose user is erased", arrange: async (w) => void (await revokeUser(w.me.userId)), status: scope === 'bot-chat:create' ? 404 : 0 },
      ];
    default:
      throw new Error(`${route.id}: the ${scope} scope is not an HTTP one`);
  }
}

/** The Bot API on a user being erased: found with `status: "erasing"`, no export (409), the DELETE again → the same task. */
function userBeingErased(id: string): Refusal {
  const status = id === 'bot_export_user' ? 409 : id === 'bot_delete_user' ? 202 : 200;
  return {
    what: 'a user being erased',
    arrange: async (w) => void (await beingErased(w)),
    status,
    body: (body) => {
      if (status === 200) expect(body).toMatchObject({ status: 'erasing' });
      if (status === 202) expect(body).toMatchObject({ task_id: '00000000-0000-4000-8000-00000000e7a5' });
    },
  };
}

test('every route declares a scope, and its handler is made for that scope', async () => {
  for (const route of [...ROUTES, NOT_FOUND, ...WS_ROUTES]) {
    const { handler } = (await import(join(ROOT, route.entry))) as { handler: { scope?: string } };
    expect({ route: route.id, handler: handler.scope }).toEqual({ route: route.id, handler: declaredScope(route) });
  }
});

test('a route without a scope fails the walk', () => {
  const undeclared = { ...ROUTES[0], scope: undefined };
  expect(() => refusalsOf(undeclared)).toThrow(/create_session declares no scope/);
  expect(() => refusalsOf({ ...ROUTES[0], scope: 'admin' })).toThrow(/declares no scope/);
});

/**
 * One world per refusal, arranged once and shared by every route that owes it: a refused request writes nothing
 * (each case checks so), and the state a refusal arranges (a user revoked, a bot off) is the same for every route.
 */
const arrangedWorlds = new Map<string, Promise<{ w: World; arranged: Awaited<ReturnType<Refusal['arrange']>> & object }>>();
function arrangedWorld(refusal: Refusal) {
  let found = arrangedWorlds.get(refusal.what);
  if (!found) {
    found = world().then(async (w) => ({ w, arranged: (await refusal.arrange(w)) ?? {} }));
    arrangedWorlds.set(refusal.what, found);
  }
  return found;
}

describe.each(ROUTES.map((r) => [`${r.method} ${r.path} (${r.scope})`, r] as const))('%s', (_, route) => {
  const refusals = refusalsOf(route);
  const cases: [string, Refusal | undefined][] = refusals.length ? refusals.map((r) => [r.what, r]) : [['no caller to refuse', undefined]];
  test.each(cases)('%s', async (_what, refusal) => {
    // The route works for its own caller (the last test): what is refused here is refused for that reason alone.
    if (!refusal) return;
    const { w, arranged } = await arrangedWorld(refusal);
    const auth = arranged.auth ?? (route.scope.startsWith('bot') ? { secretKey: w.me.secretKey } : { token: w.me.token });
    const scanned = refusal.scanned?.(w) ?? [w.me.bot.id];
    const before = await Promise.all(scanned.map(botItems));
    const res = await request(route, w, { ...w.mine, ...arranged.names }, auth);
    if (refusal.status === 0) {
      expect({ status: res.status < 300 }).toEqual({ status: true });
      return;
    }
    expect({ status: res.status, body: res.body }).toEqual({ status: refusal.status, body: refusal.status < 300 ? expect.anything() : { error: expect.any(String) } });
    refusal.body?.(res.body, w);
    if (refusal.status >= 400) expect(await Promise.all(scanned.map(botItems))).toEqual(before);
  });
});

test('each route answers its own caller (the refusals above are not a route that refuses everyone)', async () => {
  // One world for every route but the DELETE, which erases the user the others act for.
  const shared = await world();
  for (const route of ROUTES) {
    const w = route.method === 'DELETE' ? await world() : shared;
    const auth = route.scope.startsWith('bot') ? { secretKey: w.me.secretKey } : { token: w.me.token };
    const res = await request(route, w, w.mine, auth);
    expect({ route: route.id, ok: res.status < 300 }).toEqual({ route: route.id, ok: true });
  }
});
