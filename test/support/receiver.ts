// A webhook receiver run by a test: records every request (headers, raw body, parsed body, when) and answers
// `status` (after `delayMs`, a receiver that takes its time); closed by the returned `close` (register it in afterAll).
import { createServer, type IncomingMessage } from 'node:http';
import { freePort } from './ports';

export interface Hit {
  at: number;
  headers: IncomingMessage['headers'];
  raw: string;
  body: any;
}

export async function startReceiver(status = 200, delayMs = 0): Promise<{ url: string; hits: Hit[]; close(): void }> {
  const hits: Hit[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString();
    hits.push({ at: Date.now(), headers: req.headers, raw, body: JSON.parse(raw) });
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
    res.writeHead(status);
    res.end();
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
