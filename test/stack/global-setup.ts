// The integration suite's set-up: a deployed stack named by CLIENT_API_URL, CLIENT_KEY and BOT_SECRET_KEY, or
// (without CLIENT_API_URL) a fresh local stack started the way a user starts it. Then a preflight that the keys
// work and belong to one bot. Everything the tests need goes into the environment the workers inherit.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { call } from '../support/http';
import { freePort } from '../support/ports';
import { ROOT, stackEnv, startLocalProcess, type LocalProcess } from '../support/local-process';
import { finish } from './global-teardown';
import { newRunPrefix, record, USER_VARS, webhookSkipReason } from './target';

export interface RunState {
  mode: 'local' | 'deployed';
  prefix: string;
  apiUrl: string;
  runDir: string;
  ledger: string;
  started: number;
  local?: { stack: LocalProcess; dataDir: string };
}

/** Within `npm test`, against its own local stack, the suite is quiet like the rest (a passing run prints jest's lines only). */
export const quiet = () => process.env.npm_lifecycle_event === 'test' && !process.env.CLIENT_API_URL;
const say = (line: string) => quiet() || console.log(`\n[integration] ${line}`);

/** The base URL as the CDK output ApiUrl gives it; a trailing slash or /api/client is forgiven. */
function baseUrl(raw: string): string {
  const url = raw.trim().replace(/\/+$/, '').replace(/\/api\/client$/, '');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new Error(`CLIENT_API_URL must be an http(s) URL (the stack output ApiUrl), got "${raw}"`);
  return url;
}

async function startLocal(state: RunState): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-it-'));
  // ECHO_BOT=off: the suite plays the bot. BOT_CACHE_TTL_MS=0: the webhook set below applies at once.
  const env = await stackEnv(dataDir, { ECHO_BOT: 'off', BOT_CACHE_TTL_MS: '0' });
  let stack: LocalProcess;
  try {
    stack = await startLocalProcess(env, join(ROOT, 'test-output', 'integration-stack.log'));
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  state.local = { stack, dataDir };
  const demo = JSON.parse(readFileSync(join(dataDir, 'demo-bot.json'), 'utf8')) as { bot_id: string; client_key: string; secret_key: string };

  // The demo bot's webhook points at a receiver the webhook tests run on this machine, set with the bot CLI
  // as a user would (it finds the local table through DATA_DIR and DYNAMODB_PORT).
  const receiverPort = await freePort();
  const receiverUrl = `http://127.0.0.1:${receiverPort}/webhook`;
  const cli = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bin', 'bot.ts'), 'update', demo.bot_id, '--webhook-url', receiverUrl, '--json'],
    { cwd: ROOT, env: { ...process.env, ...env } },
  );
  const updated = JSON.parse(cli.stdout) as { webhook_url: string; webhook_secret: string };
  if (updated.webhook_url !== receiverUrl || !updated.webhook_secret) throw new Error(`bot CLI did not set the webhook: ${cli.stdout}`);

  Object.assign(process.env, {
    CLIENT_API_URL: stack.apiUrl,
    CLIENT_KEY: demo.client_key,
    BOT_SECRET_KEY: demo.secret_key,
    WEBHOOK_RECEIVER_URL: receiverUrl,
    WEBHOOK_RECEIVER_PORT: String(receiverPort),
    WEBHOOK_SECRET: updated.webhook_secret,
  });
}

/** Fails early, in one line, when a key is wrong, the two keys belong to different bots, or the URL is not the service. */
async function preflight(state: RunState): Promise<void> {
  const base = state.apiUrl;
  const origin = process.env.CLIENT_ORIGIN ? { origin: process.env.CLIENT_ORIGIN } : undefined;
  const session = await call('POST', '/api/client/session', {
    base,
    json: { client_key: process.env.CLIENT_KEY, external_id: `${state.prefix}preflight` },
    headers: origin,
  }).catch((err: Error) => {
    throw new Error(`cannot reach ${base}/api/client/session: ${err.message} (${(err.cause as Error)?.message ?? ''})`);
  });
  if (session.status !== 200) {
    const why: Record<number, string> = {
      404: 'CLIENT_KEY is not a bot of this stack',
      403: 'the bot is turned off, its client API is disabled, or it has allowed_origins (set CLIENT_ORIGIN to one of them)',
    };
    throw new Error(`POST /api/client/session → ${session.status} ${JSON.stringify(session.body)}: ${why[session.status] ?? 'is CLIENT_API_URL the ApiUrl output?'}`);
  }
  record('user', session.body.user.id);
  const token = session.body.session_token;
  const auth = { authorization: `Bearer ${process.env.BOT_SECRET_KEY}` };
  const chats = await call('GET', '/api/bot/chats?limit=1', { base, headers: auth });
  if (chats.status !== 200) throw new Error(`GET /api/bot/chats → ${chats.status} ${JSON.stringify(chats.body)}: BOT_SECRET_KEY is ${chats.status === 401 ? 'not accepted' : 'not usable'}`);
  // Same bot? A chat of the client key's bot must be visible to the secret key (another bot gets a 404).
  const list = await call('GET', '/api/client/chats', { base, token });
  let chatId: string | undefined = list.body?.[0]?.id;
  if (!chatId) {
    const made = await call('POST', '/api/client/chats', { base, token, json: { name: 'integration preflight' } });
    if (made.status !== 201) throw new Error(`POST /api/client/chats → ${made.status} ${JSON.stringify(made.body)}`);
    record('chat', made.body.id);
    chatId = made.body.id;
  }
  const seen = await call('GET', `/api/bot/chats/${chatId}/messages?limit=1`, { base, headers: auth });
  if (seen.status !== 200) throw new Error(`BOT_SECRET_KEY and CLIENT_KEY belong to different bots (the Bot API answers ${seen.status} for a chat of CLIENT_KEY's bot)`);
  Object.assign(process.env, {
    IT_BOT_ID: session.body.user.bot_id,
    IT_REALTIME: session.body.realtime ? 'on' : 'off',
    IT_WIDGET: JSON.stringify(session.body.widget),
  });
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const prefix = newRunPrefix();
  const runDir = mkdtempSync(join(tmpdir(), 'chat-it-run-'));
  const ledger = join(runDir, 'ledger.jsonl');
  const deployed = Boolean(process.env.CLIENT_API_URL);
  const state: RunState = { mode: deployed ? 'deployed' : 'local', prefix, apiUrl: '', runDir, ledger, started };
  (globalThis as Record<string, unknown>).__INTEGRATION__ = state;
  Object.assign(process.env, { IT_MODE: state.mode, IT_PREFIX: prefix, IT_LEDGER: ledger });

  try {
    if (deployed) {
      state.apiUrl = process.env.CLIENT_API_URL as string;
      const missing = ['CLIENT_KEY', 'BOT_SECRET_KEY'].filter((v) => !process.env[v]);
      if (missing.length) throw new Error(`CLIENT_API_URL is set, so the suite runs against that stack, and it needs ${missing.join(' and ')} too`);
      process.env.CLIENT_API_URL = state.apiUrl = baseUrl(process.env.CLIENT_API_URL as string);
    } else {
      // Against the local stack every variable is the suite's own: none of the user's may leak in.
      for (const v of USER_VARS) delete process.env[v];
      say('CLIENT_API_URL is not set: starting a local stack (its log: test-output/integration-stack.log)');
      await startLocal(state);
    }
    state.apiUrl = process.env.CLIENT_API_URL as string;
    await preflight(state);
  } catch (err) {
    // Jest runs no teardown when the set-up fails: stop what was started here.
    await finish(state).catch(() => undefined);
    throw err;
  }
  const skip = webhookSkipReason();
  const webhooks = skip
    ? `webhook tests skipped (${skip})`
    : `webhooks to ${process.env.WEBHOOK_RECEIVER_URL} (received on port ${process.env.WEBHOOK_RECEIVER_PORT})`;
  say(
    `${state.mode} stack ${state.apiUrl}, bot ${process.env.IT_BOT_ID}, realtime ${process.env.IT_REALTIME}, ` +
      `${webhooks}; this run's external ids start with ${prefix}`,
  );
}
