// Every operation of docs/openapi.yaml as a fast-check arbitrary of requests: about half fully valid, half with something wrong.
import fc from 'fast-check';
import { deref, schemaArbitrary, type Schema, type SchemaContext } from './schema-arbitrary';
import { BAD_HEADER_VALUES, badMessageIds, badQueryValues, badSegment, jsonMutations, unexpectedBody, uuidVariants, type BodyVariant } from './mutations';
import { multipartMutations, validMultipart, validUpload } from './multipart';
import { toJsonText } from './json-text';
import { badCredentials, type ChatCtx, type FuzzContext, type UserCtx } from './context';
import { readOperations, type Operation, type Param } from './document';

export interface FuzzRequest {
  op: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: BodyVariant['body'];
  valid: boolean;
  tags: string[];
  acksMessage: boolean;
  echo: string[];
  /** Right credential, but a chat or message of someone else: any 2xx is a breach. */
  mustRefuse: boolean;
  /** Chat ids the credential does not own: a 2xx naming one leaks it. */
  notMine: string[];
}

interface Scope {
  auth?: string;
  user?: UserCtx;
  chats: (ChatCtx | undefined)[];
}

/** A piece of a request, valid or mutated, with what makes it special. */
interface Piece {
  tag?: string;
  /** What the aspect holds: a path segment, the query, the headers, the authorization, the body or the route. */
  value?: unknown;
}
const piece = (value: unknown, tag?: string): Piece => ({ value, tag });
const tagged = (tag: string, values: unknown[]) => fc.constantFrom(...values).map((v) => piece(v, tag));

export function requestArbitrary(doc: Schema, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const ops = readOperations(doc);
  const mainChats = ctx.main.users.flatMap((u) => u.chats);
  const scopes = (op: Operation): Scope[] =>
    op.security === 'session'
      ? ctx.main.users.map((u) => ({ auth: `Bearer ${u.token}`, user: u, chats: u.chats }))
      : op.security === 'bot'
        ? [{ auth: `Bearer ${ctx.main.secretKey}`, chats: mainChats }]
        : [{ chats: [undefined] }];
  // Built once per operation, actor and chat (chain would otherwise build them again for every sample).
  const built = new Map<string, fc.Arbitrary<FuzzRequest>>();
  const cached = (op: Operation, s: number, scope: Scope, chat: ChatCtx | undefined) => {
    const key = `${op.key}|${s}|${chat?.id}`;
    if (!built.has(key)) built.set(key, forChat(doc, ctx, ops, op, scope, chat));
    return built.get(key)!;
  };
  return fc.oneof(
    ...ops.map((op) => fc.constantFrom(...scopes(op).map((scope, s) => [scope, s] as const)).chain(([scope, s]) => fc.constantFrom(...scope.chats).chain((chat) => cached(op, s, scope, chat)))),
  );
}

function forChat(doc: Schema, ctx: FuzzContext, ops: Operation[], op: Operation, scope: Scope, chat: ChatCtx | undefined): fc.Arbitrary<FuzzRequest> {
  const fileIds = scope.user ? scope.user.fileIds : chat?.botFileIds ?? [];
  const messageIds = chat ? [...chat.botMessageIds, ...chat.userMessageIds] : [];
  const own = new Set((scope.user ? scope.user.chats : op.security === 'bot' ? ctx.main.users.flatMap((u) => u.chats) : ctx.chats).map((c) => c.id));
  const notMine = ctx.chats.map((c) => c.id).filter((id) => !own.has(id));
  const plain: SchemaContext = { doc };
  // Values the context knows: the real client key, files the actor may attach, the chat's own ids and cursor.
  const sctx: SchemaContext = {
    doc,
    override: (path, s) => {
      if (path === 'client_key') return fc.oneof({ weight: 8, arbitrary: fc.constant(ctx.main.clientKey) }, { weight: 1, arbitrary: fc.constant(ctx.foreign.clientKey) }, { weight: 1, arbitrary: schemaArbitrary(plain, s) });
      if (path === 'files' && fileIds.length) return fc.oneof({ weight: 3, arbitrary: fc.subarray(fileIds, { minLength: 1 }) }, { weight: 1, arbitrary: schemaArbitrary(plain, s) });
      if (path === 'chat_id' && chat) return fc.constant(chat.id);
      if ((path === 'query:before' || path === 'query:after') && messageIds.length) return fc.oneof(fc.constantFrom(...messageIds), schemaArbitrary(plain, s));
      if (path === 'query:cursor' && ctx.main.cursor) return fc.oneof(fc.constant(ctx.main.cursor), schemaArbitrary(plain, s));
      return undefined;
    },
  };
  const aspects: Record<string, { valid: fc.Arbitrary<Piece>; mutated: fc.Arbitrary<Piece>; weight: number }> = {};

  const authBad = badCredentials(ctx, op.security, scope.auth?.slice(7) ?? ctx.main.users[0].token);
  aspects.auth = {
    valid: fc.constant(piece(scope.auth)),
    mutated: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...authBad).map(([tag, v]) => piece(v, `auth:${tag}`)) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 80 }).map((s) => piece(`Bearer ${s}`, 'auth:random')) },
    ),
    weight: 3,
  };

  const pathParams = op.params.filter((p) => p.in === 'path').map((p) => p.name);
  if (pathParams.includes('chat_id')) {
    const others: [string, string[]][] = [
      ['other-user', op.security === 'session' ? ctx.main.users.filter((u) => u !== scope.user).flatMap((u) => u.chats.map((c) => c.id)) : []],
      ['other-bot', ctx.foreign.users.flatMap((u) => u.chats.map((c) => c.id))],
      ['disabled-bot', ctx.disabled.users.flatMap((u) => u.chats.map((c) => c.id))],
      ['uuid-variant', chat ? uuidVariants(chat.id) : []],
      ['empty', ['']],
    ];
    aspects.chat_id = {
      valid: fc.constant(piece(chat?.id)),
      mutated: fc.oneof(...others.filter(([, ids]) => ids.length).map(([t, ids]) => tagged(`chat:${t}`, ids)), fc.uuid().map((u) => piece(u, 'chat:unknown')), badSegment.map((s) => piece(s, 'chat:malformed'))),
      weight: 3,
    };
  }
  if (pathParams.includes('message_id')) {
    const elsewhere = ctx.chats.filter((c) => c !== chat).flatMap((c) => [...c.botMessageIds, ...c.userMessageIds]);
    aspects.message_id = {
      valid: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...(chat?.botMessageIds ?? ['0'])) }, { weight: 1, arbitrary: fc.constantFrom(...(chat?.userMessageIds ?? ['0'])) }).map((id) => piece(id)),
      mutated: fc.oneof(tagged('message:other-chat', elsewhere), fc.stringMatching(/^[0-9]{19}$/).map((id) => piece(id, 'message:unknown')), tagged('message:malformed', badMessageIds), badSegment.map((s) => piece(s, 'message:malformed'))),
      weight: 2,
    };
  }

  const query = op.params.filter((p) => p.in === 'query');
  if (query.length) {
    const enc = (pairs: [string, string][]) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
    const validPairs = fc.tuple(...query.map((p) => fc.option(schemaArbitrary(sctx, p.schema, `query:${p.name}`).map((v) => [p.name, String(v)] as [string, string]), { nil: undefined })));
    // As the After parameter says: after must be older than before (a valid request keeps the pair in order).
    const pairs = validPairs.map((ps) => inOrder(ps.filter((x): x is [string, string] => x !== undefined)));
    const structural = [
      pairs.map((ps) => piece(`${enc(ps)}&${enc(ps)}`, 'query:repeated')),
      fc.constantFrom('x=1', '__proto__=1', 'limit', 'limit=', '&&&', '=', 'limit=1&limit=abc', 'LIMIT=1', 'limit[]=1', 'limit=1%00').map((q) => piece(q, 'query:odd')),
      ...(ctx.foreign.cursor && query.some((p) => p.name === 'cursor') ? [fc.constant(piece(`cursor=${encodeURIComponent(ctx.foreign.cursor)}`, 'query:other-bot-cursor'))] : []),
    ];
    aspects.query = {
      valid: pairs.map((ps) => piece(enc(ps))),
      mutated: fc.oneof(
        fc.tuple(pairs, fc.constantFrom(...query)).chain(([ps, p]) => fc.constantFrom(...badQueryValues(deref(doc, p.schema))).map((bad) => piece([enc(ps.filter(([k]) => k !== p.name)), `${p.name}=${bad}`].filter(Boolean).join('&'), `query:bad-${p.name}`))),
        ...structural,
      ),
      weight: 2,
    };
  }

  const headerParams = op.params.filter((p) => p.in === 'header');
  if (headerParams.length) {
    const one = (p: Param, v: fc.Arbitrary<string | undefined>) => v.map((x) => (x === undefined ? {} : { [p.name]: x }));
    aspects.header = {
      valid: fc.tuple(...headerParams.map((p) => one(p, fc.option(schemaArbitrary(sctx, p.schema).map(String), { nil: undefined })))).map((hs) => piece(Object.assign({}, ...hs))),
      mutated: fc.tuple(fc.constantFrom(...headerParams), fc.constantFrom(...BAD_HEADER_VALUES)).map(([p, v]) => piece({ [p.name]: v }, `header:bad-${p.name}`)),
      weight: 1,
    };
  }

  if (op.body?.contentType === 'multipart/form-data') {
    const m = validMultipart(sctx, op.body.schema);
    aspects.body = { valid: fc.tuple(m, fc.boolean()).map(([x, q]) => piece(validUpload(x, q))), mutated: multipartMutations(sctx, op.body.schema, m).map((b) => piece(b, b.tag)), weight: 6 };
  } else if (op.body) {
    const value = schemaArbitrary(sctx, op.body.schema) as fc.Arbitrary<Record<string, unknown>>;
    const valid = value.map((v) => piece({ body: toJsonText(v), contentType: 'application/json', tag: '' }));
    aspects.body = {
      valid: op.body.required ? valid : fc.oneof(valid, fc.constant(piece({ tag: '' }))),
      mutated: jsonMutations(sctx, op.body.schema, value).map((b) => piece(b, b.tag)),
      weight: 6,
    };
  } else if (op.method !== 'GET') {
    aspects.body = { valid: fc.constant(piece({ tag: '' })), mutated: unexpectedBody.map((b) => piece(b, b.tag)), weight: 1 };
  }

  // Another method or a longer path: the default route's 404.
  const otherMethods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => !ops.some((o) => o.template === op.template && o.method === m));
  aspects.route = {
    valid: fc.constant(piece({})),
    mutated: fc.oneof(fc.constantFrom(...otherMethods).map((m) => piece({ method: m }, `route:method-${m}`)), fc.constantFrom('/x', '/', '/..%2f', '.json').map((s) => piece({ suffix: s }, `route:suffix`))),
    weight: 1,
  };

  const names = Object.keys(aspects);
  const mutationWeight = names.reduce((n, a) => n + aspects[a].weight, 0);
  const assemble = (mutated: boolean) => (p: Record<string, Piece>) => build(op, p, mutated, notMine);
  return fc.oneof(
    { weight: mutationWeight, arbitrary: fc.record(Object.fromEntries(names.map((a) => [a, aspects[a].valid]))).map(assemble(false)) },
    ...names.map((a) => ({
      weight: aspects[a].weight,
      // One thing wrong; now and then a second one too (which error wins must be documented as well).
      arbitrary: fc.record(Object.fromEntries(names.map((b) => [b, b === a ? aspects[b].mutated : b === 'route' ? aspects[b].valid : fc.oneof({ weight: 19, arbitrary: aspects[b].valid }, { weight: 1, arbitrary: aspects[b].mutated })]))).map(assemble(true)),
    })),
  );
}

const REFUSED = ['chat:other-user', 'chat:other-bot', 'chat:disabled-bot', 'message:other-chat'];

function build(op: Operation, p: Record<string, Piece>, mutated: boolean, notMine: string[]): FuzzRequest {
  const route = p.route.value as { method?: string; suffix?: string };
  const method = route.method ?? op.method;
  let path = op.template.replace(/\{(\w+)\}/g, (_, name: string) => (p[name]?.value as string | undefined) ?? '');
  path += route.suffix ?? '';
  if (p.query?.value) path += `?${p.query.value as string}`;
  const headers: Record<string, string> = { ...((p.header?.value as Record<string, string> | undefined) ?? {}) };
  if (p.auth.value !== undefined) headers.authorization = p.auth.value as string;
  const body: BodyVariant | undefined = method === 'GET' || method === 'OPTIONS' || route.method ? undefined : (p.body?.value as BodyVariant | undefined);
  // As IdempotencyKey says: the same as client_message_id when both are sent (a valid request sends them equal).
  const sentKey = !mutated && typeof body?.body === 'string' && /"client_message_id":"/.test(body.body) ? (JSON.parse(body.body) as { client_message_id?: unknown }).client_message_id : undefined;
  if (typeof sentKey === 'string' && headers['Idempotency-Key'] !== undefined) headers['Idempotency-Key'] = sentKey;
  if (body?.contentType !== undefined) headers['content-type'] = body.contentType;
  return {
    op: op.key,
    method,
    path,
    headers,
    body: body?.body,
    valid: !mutated,
    tags: Object.values(p).map((x) => x.tag).filter((t): t is string => !!t),
    acksMessage: op.acksMessage,
    echo: op.echo,
    // Only with the right credential: with another one (another bot's key, say) the same ids may be its own.
    mustRefuse: !p.auth.tag && !p.route.tag && [p.chat_id?.tag, p.message_id?.tag].some((t) => REFUSED.includes(t ?? '')),
    notMine: p.auth.tag ? [] : notMine,
  };
}

function inOrder(pairs: [string, string][]): [string, string][] {
  const after = pairs.find(([k]) => k === 'after');
  const before = pairs.find(([k]) => k === 'before');
  if (after && before && after[1] >= before[1]) [after[1], before[1]] = [before[1], after[1]];
  return after && before && after[1] === before[1] ? pairs.filter((p) => p !== after) : pairs;
}
