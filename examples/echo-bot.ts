// An example bot that uses only the public surface: it receives signed webhooks for user messages (and logs
// what it would e-mail for an unread reminder) and
// answers through the Bot API the way a bot backed by a language model does: it shows it is typing, then
// posts the start of its answer and streams the rest in by editing that message. `npm start` runs it for the demo bot; run it alone against any stack with
//   API_URL=https://... BOT_SECRET_KEY=sk_... WEBHOOK_SECRET=whsec_... PORT=3002 npx tsx examples/echo-bot.ts
// and set the bot's webhook to http(s)://<where this runs>/webhook.
import { createServer, type Server } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface EchoBotOptions {
  port: number;
  host?: string;
  /** Base URL of the service, e.g. http://localhost:3000 */
  apiUrl: string;
  secretKey: string;
  webhookSecret: string;
  log?: (line: string) => void;
  /** Pause between the typing indicator and the first words, and between edits (ms). */
  thinkMs?: number;
  streamStepMs?: number;
}

/** Refuse events older than this (replays); a receiver should also dedupe by X-Webhook-Id. */
const TOLERANCE_SECONDS = 300;

/** How a receiver verifies a webhook: HMAC-SHA256 of "<timestamp>.<raw body>", hex, compared in constant time. */
export function verifyWebhook(secret: string, rawBody: string, timestamp: string | undefined, signature: string | undefined): boolean {
  if (!timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

interface WebhookEvent {
  event: string;
  chat: { id: string };
  message: { id: string; content: string; files: { type: string; name: string | null; size: number | null }[] | null };
}

/** chat.unread_reminder: replies the user has left unread (the bot's setting unread_reminder_seconds). */
interface ReminderEvent {
  event: 'chat.unread_reminder';
  chat: { id: string };
  user: { id: string; external_id: string | null; first_name: string; last_name: string };
  messages: { id: string; content: string }[];
  unread_count: number;
}

/** What a site does with a reminder: e-mail or push the user (here, a line saying so). */
export function reminderLine(e: ReminderEvent): string {
  const who = [e.user.first_name, e.user.last_name].filter(Boolean).join(' ') || e.user.external_id || e.user.id;
  const first = e.messages[0]?.content ?? '';
  return `would e-mail ${who}: ${e.unread_count} unread ${e.unread_count === 1 ? 'reply' : 'replies'} in chat ${e.chat.id}, the first: "${first.slice(0, 80)}"`;
}

/** The reply: an echo of the text, or a word about the file. */
export function replyTo(message: WebhookEvent['message']): string {
  const file = message.files?.[0];
  if (file?.type === 'photo') return `Nice photo! I got ${file.name ?? 'it'}${file.size ? ` (${file.size} bytes)` : ''}.`;
  if (file) return `Thanks for the ${file.type} ${file.name ?? ''}`.trimEnd() + '.';
  return `You said: ${message.content}`;
}

/** The reply as it grows: up to four cumulative prefixes, cut at word boundaries, the last one whole. */
export function streamSteps(reply: string, steps = 4): string[] {
  const words = reply.split(' ');
  const count = Math.min(steps, words.length);
  return Array.from({ length: count }, (_, i) => words.slice(0, Math.ceil(((i + 1) * words.length) / count)).join(' '));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startEchoBot(o: EchoBotOptions): Promise<Server> {
  const log = o.log ?? ((line: string) => console.log(`[echo-bot] ${line}`));
  const seen = new Set<string>(); // webhooks are at least once: answer each message once
  const botApi = async (method: string, path: string, body: unknown, expected: number) => {
    const res = await fetch(`${o.apiUrl}/api/bot${path}`, {
      method,
      headers: { authorization: `Bearer ${o.secretKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const reply = (await res.json()) as { id?: string; error?: string };
    if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${reply.error ?? ''}`);
    return reply;
  };
  const answer = async (event: WebhookEvent) => {
    const chat = `/chats/${event.chat.id}`;
    await botApi('POST', `${chat}/typing`, { sender: 'bot' }, 200);
    await sleep(o.thinkMs ?? 600);
    const [first, ...rest] = streamSteps(replyTo(event.message));
    const message = await botApi('POST', `${chat}/messages`, { content: first, content_type: 'text' }, 201);
    // Each edit carries its number: were two to arrive out of order, the older would be refused, not applied.
    for (const [i, content] of rest.entries()) {
      await sleep(o.streamStepMs ?? 250);
      await botApi('PATCH', `${chat}/messages/${message.id}`, { content, version: i + 1 }, 200);
    }
  };
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/webhook') {
      res.writeHead(404);
      return res.end();
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const ok = verifyWebhook(o.webhookSecret, raw, req.headers['x-webhook-timestamp'] as string, req.headers['x-webhook-signature'] as string);
    if (!ok) {
      res.writeHead(401);
      return res.end('bad signature');
    }
    // Acknowledge at once; reply afterwards (the service gives a webhook a few seconds at most).
    res.writeHead(204);
    res.end();
    const event = JSON.parse(raw) as WebhookEvent | ReminderEvent;
    const id = String(req.headers['x-webhook-id'] ?? '');
    if (!id || seen.has(id)) return;
    seen.add(id);
    if (seen.size > 10_000) seen.delete(seen.values().next().value as string);
    if (event.event === 'chat.unread_reminder') return log(reminderLine(event as ReminderEvent));
    if (event.event !== 'message.created') return;
    answer(event as WebhookEvent).catch((err) => log(`reply failed: ${(err as Error).message}`));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host ?? '127.0.0.1', () => resolve());
  });
  return server;
}

if (require.main === module) {
  const need = (name: string) => {
    const v = process.env[name];
    if (!v) throw new Error(`set ${name}`);
    return v;
  };
  startEchoBot({
    port: Number(process.env.PORT ?? 3002),
    host: process.env.HOST ?? '0.0.0.0',
    apiUrl: need('API_URL'),
    secretKey: need('BOT_SECRET_KEY'),
    webhookSecret: need('WEBHOOK_SECRET'),
  }).then(() => console.log(`[echo-bot] listening on :${process.env.PORT ?? 3002}/webhook`));
}
