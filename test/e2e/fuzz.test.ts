// Property-based fuzzing (fast-check) of every client and Bot API route: generated bodies, headers, paths,
// query strings and multipart parts. Never a 5xx; every 4xx is JSON {error}; requests that must be
// rejected are, and write nothing. Bounded: a fixed number of runs per property.
import fc from 'fast-check';
import { ROUTES } from '../../lib/routes';
import { botItems, call, userWithChat } from '../support/api';

const RUNS = 30;
let ctx: Awaited<ReturnType<typeof userWithChat>>;
let foreign: Awaited<ReturnType<typeof userWithChat>>;
let sent = 0;

beforeAll(async () => {
  ctx = await userWithChat();
  foreign = await userWithChat();
});
afterAll(() => console.log(`fuzz: ${sent} generated requests`));

const chatIds = () =>
  fc.oneof(
    fc.constant(ctx.chatId),
    fc.constant(foreign.chatId),
    fc.uuid(),
    fc.string({ maxLength: 40 }).map(encodeURIComponent),
    fc.constantFrom('..', '%00', '%2e%2e%2f', 'null', '0', ' '.repeat(3), 'a'.repeat(300)),
  );

const auths = (bot: boolean) =>
  fc.oneof(
    fc.constant(`Bearer ${bot ? ctx.secretKey : ctx.token}`),
    fc.constant(`Bearer ${bot ? ctx.token : ctx.secretKey}`),
    fc.constant(undefined),
    fc.string({ maxLength: 60 }).map((s) => `Bearer ${s}`),
    fc.string({ maxLength: 60 }),
  );

const bodies = () =>
  fc.oneof(
    fc.json().map((j) => ({ body: j, type: 'application/json' })),
    fc.jsonValue().map((j) => ({ body: JSON.stringify(j), type: 'application/json' })),
    fc
      .record({ content: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), content_type: fc.string(), files: fc.array(fc.string(), { maxLength: 3 }), name: fc.string(), sender: fc.string(), client_message_id: fc.string() }, { requiredKeys: [] })
      .map((o) => ({ body: JSON.stringify(o), type: 'application/json' })),
    fc.string().map((s) => ({ body: s, type: 'text/plain' })),
    multipart(),
  );

/** Raw multipart bodies, well-formed or not, with parts named from a set that includes the real ones. */
function multipart() {
  const part = fc.record({
    name: fc.constantFrom('file', 'type', 'chat_id', 'x', ''),
    filename: fc.option(fc.string({ maxLength: 20 }).map((s) => s.replace(/["\r\n]/g, '')), { nil: undefined }),
    type: fc.constantFrom('image/png', 'text/html', 'application/octet-stream', '', 'x'),
    data: fc.string({ maxLength: 200 }),
  });
  return fc.tuple(fc.array(part, { maxLength: 4 }), fc.boolean(), fc.constantFrom('b0undary', 'x'.repeat(70), '')).map(([parts, close, boundary]) => {
    const chunks = parts.map(
      (p) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}\r\n` +
        (p.type ? `Content-Type: ${p.type}\r\n` : '') +
        `\r\n${p.data}\r\n`,
    );
    return { body: chunks.join('') + (close ? `--${boundary}--\r\n` : ''), type: `multipart/form-data; boundary=${boundary}` };
  });
}

const queries = () =>
  fc
    .dictionary(fc.constantFrom('limit', 'before', 'after', 'cursor', 'x'), fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String), fc.constant('1'.repeat(19))), { maxKeys: 3 })
    .map((d) => new URLSearchParams(d).toString());

function expectClean(res: { status: number; body: unknown }, what: string): void {
  if (res.status >= 500) throw new Error(`${what} → ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status >= 400) {
    const ok = typeof res.body === 'object' && res.body !== null && Object.keys(res.body).join() === 'error' && typeof (res.body as any).error === 'string';
    if (!ok) throw new Error(`${what} → ${res.status} without a JSON {error}: ${JSON.stringify(res.body)}`);
  }
}

describe.each(ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_name, route) => {
  test('never a 5xx; every 4xx is JSON {error}', async () => {
    const bot = route.path.startsWith('/api/bot');
    await fc.assert(
      fc.asyncProperty(chatIds(), auths(bot), bodies(), queries(), async (chatId, auth, { body, type }, query) => {
        const path = route.path.replace('{chat_id}', chatId) + (query ? `?${query}` : '');
        const headers: Record<string, string> = { ...(auth !== undefined && { authorization: auth }), 'content-type': type };
        sent++;
        const res = await call(route.method, path, { headers, body: route.method === 'POST' ? body : undefined });
        expectClean(res, `${route.method} ${path}`);
      }),
      { numRuns: RUNS },
    );
  }, 60_000);
});

test('requests built to be rejected are rejected (4xx) and leave the table as it was', async () => {
  const before = await botItems(ctx.bot.id);
  const invalidName = fc.oneof(fc.integer(), fc.constant(null), fc.constant(''), fc.string({ minLength: 201, maxLength: 260 }), fc.array(fc.string()));
  const invalidContent = fc.oneof(fc.integer(), fc.constant(null), fc.string({ minLength: 10_001, maxLength: 10_050 }), fc.constant(''));
  const cases = fc.oneof(
    fc.record({ name: invalidName, extra: fc.json() }).map((b) => ['POST', '/api/client/chats', b] as const),
    fc.record({ content: invalidContent, content_type: fc.string() }).map((b) => ['POST', `/api/client/chats/${ctx.chatId}/messages`, b] as const),
    fc.record({ content: fc.string({ minLength: 1 }) }).map((b) => ['POST', `/api/client/chats/${foreign.chatId}/messages`, b] as const),
    fc.uuid().map((id) => ['POST', `/api/client/chats/${id}/read`, {}] as const),
    fc.record({ client_key: fc.string().filter((k) => !k.startsWith('cli_')), external_id: fc.string() }).map((b) => ['POST', '/api/client/session', b] as const),
    fc.record({ content: fc.string({ minLength: 1 }), sender: fc.string().filter((s) => s !== 'bot' && s !== 'operator') }).map((b) => ['POST-BOT', `/api/bot/chats/${ctx.chatId}/messages`, b] as const),
  );
  await fc.assert(
    fc.asyncProperty(cases, async ([method, path, body]) => {
      const bot = method === 'POST-BOT';
      sent++;
      const res = await call('POST', path, { json: body, ...(bot ? { headers: { authorization: `Bearer ${ctx.secretKey}` } } : { token: ctx.token }) });
      expectClean(res, `${method} ${path}`);
      if (res.status < 400 || res.status >= 500) throw new Error(`${path} ${JSON.stringify(body).slice(0, 80)} → ${res.status}`);
    }),
    { numRuns: 150 },
  );
  expect(await botItems(ctx.bot.id)).toEqual(before);
}, 120_000);
