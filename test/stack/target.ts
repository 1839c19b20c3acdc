// The stack the integration suite talks to, as the global set-up resolved it (environment variables, read by
// the set-up, every test worker and the teardown), and the run's ledger of what it created.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';

export interface Target {
  mode: 'local' | 'deployed';
  /** Base URL: the Client API is under /api/client, the Bot API under /api/bot. */
  apiUrl: string;
  clientKey: string;
  secretKey: string;
  /** The bot both keys belong to (checked by the set-up). */
  botId: string;
  /** Sent as Origin on session creation (for a bot with allowed_origins). */
  origin?: string;
  /** Overrides the WebSocket URL of the session's realtime block. */
  realtimeUrl?: string;
  /** Whether the probe session had a realtime block. */
  realtime: boolean;
  widget: { primary_color: string; multiple_chats: boolean; attachments: boolean };
  /** Where webhooks of the bot arrive on this machine, and their secret; absent: webhook tests are skipped. */
  webhook?: { url: string; port: number; secret: string };
  /** Every external_id the run creates starts with it. */
  prefix: string;
  /** How long to wait for asynchronous effects (realtime, webhooks, the Bot API's index). */
  patienceMs: number;
}

/** The variables a user sets to run the suite against a deployed stack. */
export const USER_VARS = ['CLIENT_API_URL', 'CLIENT_KEY', 'BOT_SECRET_KEY', 'REALTIME_URL', 'CLIENT_ORIGIN', 'WEBHOOK_RECEIVER_URL', 'WEBHOOK_RECEIVER_PORT', 'WEBHOOK_SECRET'] as const;

export function target(): Target {
  const env = process.env;
  if (!env.IT_PREFIX || !env.IT_LEDGER) throw new Error('run the integration suite through `npm run test:integration` (its global set-up resolves the stack)');
  const webhookPort = Number(env.WEBHOOK_RECEIVER_PORT);
  return {
    mode: env.IT_MODE === 'local' ? 'local' : 'deployed',
    apiUrl: env.CLIENT_API_URL as string,
    clientKey: env.CLIENT_KEY as string,
    secretKey: env.BOT_SECRET_KEY as string,
    botId: env.IT_BOT_ID as string,
    origin: env.CLIENT_ORIGIN || undefined,
    // A deployed stack's WebSocket URL when given; a local run's sessions carry their own (and in `npm test`
    // REALTIME_URL names the other project's stack).
    realtimeUrl: env.IT_MODE === 'local' ? undefined : env.REALTIME_URL || undefined,
    realtime: env.IT_REALTIME === 'on',
    widget: JSON.parse(env.IT_WIDGET as string) as Target['widget'],
    webhook:
      env.WEBHOOK_RECEIVER_URL && env.WEBHOOK_SECRET && Number.isInteger(webhookPort) && webhookPort > 0
        ? { url: env.WEBHOOK_RECEIVER_URL, port: webhookPort, secret: env.WEBHOOK_SECRET }
        : undefined,
    prefix: env.IT_PREFIX,
    patienceMs: env.IT_MODE === 'local' ? 10_000 : 30_000,
  };
}

/** Why webhook tests are skipped against this stack, or undefined when they run. */
export function webhookSkipReason(): string | undefined {
  const env = process.env;
  if (env.WEBHOOK_RECEIVER_URL && env.WEBHOOK_SECRET && env.WEBHOOK_RECEIVER_PORT) return undefined;
  return 'set WEBHOOK_RECEIVER_URL (a public URL forwarding to WEBHOOK_RECEIVER_PORT on this machine), WEBHOOK_RECEIVER_PORT and WEBHOOK_SECRET, with the bot\'s webhook set to that URL';
}

// ---- The ledger: one JSON line per thing created, appended by every worker, summed up by the teardown ----

export type Kind = 'user' | 'chat' | 'message' | 'file';

export function record(kind: Kind, id: string): void {
  appendFileSync(process.env.IT_LEDGER as string, JSON.stringify({ kind, id }) + '\n');
}

export function tally(ledger: string): Record<Kind, number> {
  const seen: Record<Kind, Set<string>> = { user: new Set(), chat: new Set(), message: new Set(), file: new Set() };
  if (existsSync(ledger)) {
    for (const line of readFileSync(ledger, 'utf8').split('\n')) {
      if (!line) continue;
      const { kind, id } = JSON.parse(line) as { kind: Kind; id: string };
      seen[kind]?.add(id);
    }
  }
  return { user: seen.user.size, chat: seen.chat.size, message: seen.message.size, file: seen.file.size };
}

/** `it-<yyyymmddhhmmss>-<random>-`, UTC. */
export function newRunPrefix(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `it-${stamp}-${randomBytes(3).toString('hex')}-`;
}
