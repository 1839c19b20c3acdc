// What the functions log on the local stack (test-output/local-stack.log, written by the global set-up):
// one JSON access line per request with its request id, route, bot id and user id; never a token, a secret
// key or a message body.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, newBot, newSession } from '../support/api';
import { jsonLines } from '../support/jsonl';

const LOG = join(__dirname, '..', '..', 'test-output', 'local-stack.log');

/** A JSON line of the log, as far as these tests read it (lambdas/shared/log.ts writes it). */
type LogLine = { message?: string; route?: string; status?: number; bot_id?: string; user_id?: string; duration_ms?: number } & Record<string, unknown>;

/** The JSON log lines of the run so far (the stack also prints plain start-up lines). */
const logLines = () => jsonLines<LogLine>(LOG);

async function linesWhere(match: (e: LogLine) => boolean, count: number): Promise<LogLine[]> {
  for (let i = 0; i < 100; i++) {
    const found = logLines().filter(match);
    if (found.length >= count) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  return logLines().filter(match);
}

test('client and Bot API requests: one access line each with request id, route, bot id, user id, status; no secrets', async () => {
  const { bot, secretKey } = await newBot();
  const content = `private words ${Date.now()}`;
  const session = await newSession(bot.client_key, { external_id: `log-${Date.now()}` });
  const chat = await call('POST', '/api/client/chats', { token: session.session_token, json: { name: 'logged' } });
  await call('POST', `/api/client/chats/${chat.body.id}/messages`, { token: session.session_token, json: { content } });
  await call('GET', `/api/bot/chats/${chat.body.id}/messages`, { headers: { authorization: `Bearer ${secretKey}` } });
  await call('GET', '/api/client/chats', { token: 'not-a-token' });

  const mine = await linesWhere((e) => e.message === 'request' && e.bot_id === bot.id, 4);
  expect(mine.map((e) => [e.route, e.status])).toEqual([
    ['POST /api/client/session', 200],
    ['POST /api/client/chats', 201],
    ['POST /api/client/chats/{chat_id}/messages', 201],
    ['GET /api/bot/chats/{chat_id}/messages', 200],
  ]);
  for (const e of mine) {
    expect(e).toMatchObject({ level: 'INFO', service: 'chat-bot', user_id: session.user.id, request_id: expect.any(String), timestamp: expect.any(String) });
    expect(e.duration_ms).toBeGreaterThanOrEqual(0);
  }
  // A request that fails authentication is logged too, without ids it could not trust (other tests' 401s on this
  // route, of erased users, carry theirs: their tokens are genuine).
  const refused = await linesWhere((e) => e.message === 'request' && e.route === 'GET /api/client/chats' && e.status === 401 && e.bot_id === undefined, 1);
  expect(refused[0].user_id).toBeUndefined();

  const text = readFileSync(LOG, 'utf8');
  for (const secret of [session.session_token, secretKey, content, session.realtime?.token]) {
    if (secret) expect(text).not.toContain(secret);
  }
});
