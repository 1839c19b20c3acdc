// Property-based fuzzing (fast-check) of every Client and Bot API route, generated from docs/openapi.yaml
// (test/fuzz/): about half the requests fully valid, half with one thing wrong (auth, ids, query, headers, body,
// multipart framing). Never a 5xx, every answer as documented, no acknowledged message lost; and requests built
// to be rejected are, and write nothing. Bounded: a fixed number of requests per run.
import { randomInt } from 'node:crypto';
import fc from 'fast-check';
import { apiUrl, botItems, call, userWithChat } from '../support/api';
import { runFuzz } from '../fuzz/runner';
import { replayHint } from '../fuzz/report';

let ctx: Awaited<ReturnType<typeof userWithChat>>;
let foreign: Awaited<ReturnType<typeof userWithChat>>;

beforeAll(async () => {
  ctx = await userWithChat();
  foreign = await userWithChat();
});

function expectClean(res: { status: number; body: unknown }, what: string): void {
  if (res.status >= 500) throw new Error(`${what} → ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status >= 400) {
    const ok = typeof res.body === 'object' && res.body !== null && Object.keys(res.body).join() === 'error' && typeof (res.body as { error?: unknown }).error === 'string';
    if (!ok) throw new Error(`${what} → ${res.status} without a JSON {error}: ${JSON.stringify(res.body)}`);
  }
}

// FUZZ_SEED replays a run; FUZZ_REQUESTS makes it longer. The seed shows only when something failed.
test('requests generated from docs/openapi.yaml: never a 5xx, never off the document, no acknowledged message lost', async () => {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(2 ** 32);
  const requests = Math.max(2000, Number(process.env.FUZZ_REQUESTS ?? 0));
  // Two at a time: the stack is shared with the other suites (the browser tests among them), which it must not starve.
  const report = await runFuzz({ baseUrl: apiUrl(), requests, seed, concurrency: 2 });
  const failed = report.failureCount > 0;
  expect({ failures: report.failures, ...(failed && { failureCount: report.failureCount, seed, replay: `FUZZ_SEED=${seed} npx jest test/e2e/fuzz.test.ts, or ${replayHint(seed, requests)}` }) }).toEqual({ failures: [] });
}, 240_000);

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
      const res = await call('POST', path, { json: body, ...(bot ? { headers: { authorization: `Bearer ${ctx.secretKey}` } } : { token: ctx.token }) });
      expectClean(res, `${method} ${path}`);
      if (res.status < 400 || res.status >= 500) throw new Error(`${path} ${JSON.stringify(body).slice(0, 80)} → ${res.status}`);
    }),
    { numRuns: 150 },
  );
  expect(await botItems(ctx.bot.id)).toEqual(before);
}, 120_000);
