// A webhook receiver run by a test: records every request (headers, raw body, parsed body, when) and answers
// `status` (a number, or one per request numbered from 1; after `delayMs`, a receiver that takes its time); closed by the returned `close` (register it in afterAll).
import { createServer, type IncomingMessage } from 'node:http';
import { freePort } from './ports';
import type { Schemas } from './contract';

/** What a webhook delivery holds: one of docs/openapi.yaml's events, told apart by `event`. */
export type WebhookEvent = Schemas['WebhookMessageCreated'] | Schemas['WebhookMessageResponse'] | Schemas['WebhookUnreadReminder'];

export interface Hit {
  at: number;
  headers: IncomingMessage['headers'];
  raw: string;
  /** The delivery parsed: the service posts only its documented events (tests check them with checkWebhook). */
  body: WebhookEvent;
}

export async function startReceiver(status: number | ((n: number) => number) = 200, delayMs = 0): Promise<{ url: string; hits: Hit[]; close(): void }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString();
      hits.push({ at: Date.now(), headers: req.headers, raw, body: JSON.parse(raw) as WebhookEvent });
      const answer = typeof status === 'number' ? status : status(hits.length);
      setTimeout(() => {
        res.writeHead(answer);
        res.end();
      }, delayMs);
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
