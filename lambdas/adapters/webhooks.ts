// A webhook's delivery: its signature, and one POST of any event (a message's: flows/webhook-events.ts; a
// reminder's: flows/reminders.ts) under the address rule (adapters/webhook-target.ts).
import { createHmac } from 'node:crypto';
import { config } from '../shared/config';
import { postWebhook } from './webhook-target';

/** Hex HMAC-SHA256 of `<timestamp>.<body>` with the bot's webhook secret (docs/bot-api.md: how to verify). */
export const signWebhook = (secret: string, timestamp: string, body: string): string =>
  createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');

export type DeliveryResult = { ok: true; status: number } | { ok: false; reason: string; refused?: boolean; timedOut?: boolean };

/**
 * One POST with a short timeout, under the address rule (adapters/webhook-target.ts); only a 2xx counts as
 * delivered. `refused`: the rule stopped it before any byte was sent, so a retry cannot help. `timedOut`: the
 * receiver did not answer within WEBHOOK_TIMEOUT_MS (its bot then takes the slow lane, flows/webhook-lanes.ts).
 */
export async function deliver(url: string, secret: string, eventId: string, event: { event: string }): Promise<DeliveryResult> {
  const body = JSON.stringify(event);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'nexus-webhooks/1',
    'x-webhook-id': eventId,
    'x-webhook-timestamp': timestamp,
    'x-webhook-signature': signWebhook(secret, timestamp, body),
  };
  const { webhookTimeoutMs, webhookAllowLoopback } = config();
  const r = await postWebhook(url, headers, body, webhookTimeoutMs, webhookAllowLoopback);
  if ('status' in r) return r.status >= 200 && r.status < 300 ? { ok: true, status: r.status } : { ok: false, reason: `HTTP ${r.status}` };
  if (r.refused) return { ok: false, reason: r.error.message, refused: true };
  if (r.timedOut) return { ok: false, reason: r.error.message, timedOut: true };
  return { ok: false, reason: (r.error as NodeJS.ErrnoException).code ?? r.error.message };
}
