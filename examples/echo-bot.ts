// An example bot that uses only the public surface: it receives signed webhooks for user messages and for the
// answers to its interactive messages (and logs what it would e-mail for an unread reminder), and
// answers through the Bot API the way a bot backed by a language model does: it shows it is typing, then
// posts the start of its answer and streams the rest in by editing that message. `menu`, `card`, `form` and
// `rate` get an interactive message instead (echo-bot-interactive.ts), and each answer to one gets words.
// Every write is retried on 429, 503 and network errors with the same idempotency key (botApiCall), so a reply
// is never lost or doubled.
// `npm start` runs it for the demo bot; run it alone against any stack with
//   API_URL=https://... BOT_SECRET_KEY=sk_... WEBHOOK_SECRET=whsec_... PORT=3002 npx tsx examples/echo-bot.ts
// and set the bot's webhook to http(s)://<where this runs>/webhook.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { askFor, CARD_PHOTO, keywordOf, responseWords, type AnsweredMessage, type Keyword } from './echo-bot-interactive';

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

/** message.created (a user message) or message.response (the user's answer to one of the bot's messages). */
interface WebhookEvent {
  event: 'message.created' | 'message.response';
  chat: { id: string };
  message: AnsweredMessage & { id: string; content: string; files: { type: string; name: string | null; size: number | null }[] | null };
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

/** How hard a Bot API write is tried: attempts in all, the first backoff, the longest wait between two. */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxWaitMs: number;
}
export const RETRY: RetryPolicy = { attempts: 8, baseMs: 500, maxWaitMs: 30_000 };

/** Retry-After in ms (seconds or an HTTP date), or undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const ms = /^\d+$/.test(header.trim()) ? Number(header) * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

/**
 * One Bot API call, retried until it lands: a 429 or 503 after its Retry-After (a doubling backoff with jitter
 * when absent), and a network error (refused, reset, no answer within 10 s) after the backoff; any other status
 * is final. Every attempt sends the same body and the same Idempotency-Key, so a write whose reply was lost is
 * not applied twice: the retry gets the first attempt's result.
 */
export async function botApiCall(
  api: { apiUrl: string; secretKey: string },
  method: string,
  path: string,
  body: unknown,
  idempotencyKey?: string,
  policy: RetryPolicy = RETRY,
): Promise<{ status: number; body: { id?: string; error?: string } }> {
  // A body is JSON, or a multipart form (a file upload) whose content-type, with its boundary, fetch sets.
  const form = body instanceof FormData;
  const headers: Record<string, string> = { authorization: `Bearer ${api.secretKey}`, ...(!form && { 'content-type': 'application/json' }) };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  for (let attempt = 1; ; attempt++) {
    const backoff = Math.min(policy.maxWaitMs, policy.baseMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
    let wait: number;
    try {
      const res = await fetch(`${api.apiUrl}/api/bot${path}`, { method, headers, body: form ? body : JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if ((res.status !== 429 && res.status !== 503) || attempt >= policy.attempts) {
        let parsed: { id?: string; error?: string };
        try {
          parsed = JSON.parse(text) as { id?: string; error?: string };
        } catch {
          parsed = { error: text };
        }
        return { status: res.status, body: parsed };
      }
      wait = retryAfterMs(res.headers.get('retry-after')) ?? backoff;
    } catch (err) {
      // No whole answer: the write may or may not have landed; the same key on the retry settles which.
      if (attempt >= policy.attempts) throw err;
      wait = backoff;
    }
    await sleep(Math.min(wait, policy.maxWaitMs));
  }
}

export async function startEchoBot(o: EchoBotOptions): Promise<Server> {
  const log = o.log ?? ((line: string) => console.log(`[echo-bot] ${line}`));
  const seen = new Set<string>(); // webhooks are at least once: handle each event once
  const botApi = async (method: string, path: string, body: unknown, expected: number[], key?: string) => {
    const reply = await botApiCall(o, method, path, body, key);
    if (!expected.includes(reply.status)) throw new Error(`${method} ${path}: ${reply.status} ${reply.body.error ?? ''}`);
    return reply.body;
  };
  const typing = async (chat: string) => {
    // Typing has no key, but a repeat is harmless (one publication per 2 s at most): retried like the rest, and
    // its failure never costs the reply.
    await botApi('POST', `${chat}/typing`, { sender: 'bot' }, [200]).catch((err) => log(`typing not shown: ${(err as Error).message}`));
    await sleep(o.thinkMs ?? 600);
  };
  // The card's photo, a file of the chat, so it shows with no other server. An upload has no key: one whose reply
  // was lost, or a card asked again after a restart, leaves a spare file, which expires unsent after 24 h.
  const uploadPhoto = async (chatId: string): Promise<string> => {
    const form = new FormData();
    form.append('chat_id', chatId);
    form.append('file', new Blob([CARD_PHOTO], { type: 'image/png' }), 'echo-bot.png');
    return (await botApi('POST', '/files', form, [201])).id as string;
  };
  /** A keyword's interactive message; the key is the user message's, like an echo's. */
  const ask = async (chatId: string, keyword: Keyword, key: string) => {
    await typing(`/chats/${chatId}`);
    // Without its photo (the upload failed after every retry) a card is still worth sending.
    const photoId = keyword === 'card' ? await uploadPhoto(chatId).catch((err) => void log(`card photo not uploaded: ${(err as Error).message}`)) : undefined;
    await botApi('POST', `/chats/${chatId}/messages`, askFor(keyword, { apiUrl: o.apiUrl, photoId: photoId ?? undefined }), [200, 201], key);
  };
  /**
   * Words, streamed in. The key is made from what is answered: a retry, or the webhook delivered again, finds the
   * same reply (200) instead of sending a second.
   */
  const say = async (chatId: string, words: string, key: string) => {
    const chat = `/chats/${chatId}`;
    await typing(chat);
    const [first, ...rest] = streamSteps(words);
    const message = await botApi('POST', `${chat}/messages`, { content: first, content_type: 'text' }, [200, 201], key);
    // Each edit carries its number: were two to arrive out of order, the older would be refused, not applied.
    // The number is also the edit's idempotency key: the same edit sent again (its reply lost) answers 200.
    for (const [i, content] of rest.entries()) {
      await sleep(o.streamStepMs ?? 250);
      const edited = await botApi('PATCH', `${chat}/messages/${message.id}`, { content, version: i + 1 }, [200, 409]);
      if (edited.error) return; // 409: a newer edit is applied already (this reply was streamed before)
    }
  };
  const server = createServer((req, res) => void onRequest(req, res));
  async function onRequest(req: IncomingMessage, res: ServerResponse) {
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
    if (event.event === 'chat.unread_reminder') return log(reminderLine(event));
    handle(event)?.catch((err) => log(`reply failed: ${(err as Error).message}`));
  }
  function handle({ event, chat, message }: WebhookEvent): Promise<void> | undefined {
    if (event === 'message.response') {
      // A message is answered once (the service keeps the first answer): one reply per answered message.
      const words = responseWords(message);
      return words === undefined ? undefined : say(chat.id, words, `echo-answer-${message.id}`);
    }
    if (event !== 'message.created') return undefined;
    const keyword = message.files?.length ? undefined : keywordOf(message.content);
    return keyword ? ask(chat.id, keyword, `echo-reply-${message.id}`) : say(chat.id, replyTo(message), `echo-reply-${message.id}`);
  }
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
  void startEchoBot({
    port: Number(process.env.PORT ?? 3002),
    host: process.env.HOST ?? '0.0.0.0',
    apiUrl: need('API_URL'),
    secretKey: need('BOT_SECRET_KEY'),
    webhookSecret: need('WEBHOOK_SECRET'),
  }).then(() => console.log(`[echo-bot] listening on :${process.env.PORT ?? 3002}/webhook`));
}
