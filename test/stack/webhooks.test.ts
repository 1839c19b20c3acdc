// Webhooks as the bot's receiver sees them: a signed message.created for each user message, verified with the
// webhook secret as docs/bot-api.md "Webhooks" says. The receiver runs here on WEBHOOK_RECEIVER_PORT; against a deployed
// stack WEBHOOK_RECEIVER_URL must forward to it and be the bot's webhook already.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { botApi, ext, say, sleep, T, userWithChat } from './client';
import { webhookSkipReason } from './target';

interface Hit {
  headers: IncomingHttpHeaders;
  raw: string;
  body: unknown;
}

/** docs/bot-api.md "Webhooks": hex HMAC-SHA256 of "<timestamp>.<raw body>", compared in constant time, fresh. */
function verified(secret: string, hit: Hit): boolean {
  const ts = hit.headers['x-webhook-timestamp'];
  const sig = hit.headers['x-webhook-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string' || !/^\d+$/.test(ts)) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${ts}.${hit.raw}`).digest();
  const given = Buffer.from(sig, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const skip = webhookSkipReason();
if (skip) console.log(`[integration] webhook tests skipped: ${skip}`);
const describeWebhooks = skip ? describe.skip : describe;

describeWebhooks(skip ? `webhooks (skipped: ${skip})` : `webhooks (received on port ${T.webhook?.port})`, () => {
  const hits: Hit[] = [];
  let server: Server;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString();
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = undefined;
        }
        if (req.method === 'POST') hits.push({ headers: req.headers, raw, body });
        res.writeHead(200);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(T.webhook!.port, '127.0.0.1', () => resolve());
    });
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  // Other tests' messages reach this receiver too: look only for this test's message ids.
  const hitFor = async (messageId: string): Promise<Hit> => {
    const deadline = Date.now() + T.patienceMs;
    for (;;) {
      const hit = hits.find((h) => h.headers['x-webhook-id'] === messageId);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`no webhook for message ${messageId} within ${T.patienceMs} ms (${hits.length} other webhooks arrived)`);
      await sleep(50);
    }
  };

  test('a user message arrives as a signed message.created; a bot reply sends none', async () => {
    const { session, token, chatId } = await userWithChat('webhook');
    const sent = await say(token, chatId, `order status please ${T.prefix}`);
    expect(sent.status).toBe(201);
    const hit = await hitFor(sent.body.id);

    expect(hit.headers['content-type']).toMatch(/^application\/json/);
    expect(verified(T.webhook!.secret, hit)).toBe(true);
    expect(hit.body).toEqual({
      event: 'message.created',
      bot_id: T.botId,
      chat: expect.objectContaining({ id: chatId, name: 'Support' }),
      user: { id: session.user.id, external_id: ext('webhook'), first_name: '', last_name: '' },
      message: sent.body,
    });

    // The bot's own reply is not sent back to it; the next user message is.
    const reply = await botApi('POST', `/chats/${chatId}/messages`, { json: { content: 'On its way.' } });
    expect(reply.status).toBe(201);
    const next = await say(token, chatId, 'thanks');
    await hitFor(next.body.id);
    await sleep(500); // none may come, and deliveries through the queue keep no order that could mark the end
    expect(hits.filter((h) => h.headers['x-webhook-id'] === reply.body.id)).toEqual([]);
  });
});
