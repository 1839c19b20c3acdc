// HTTP for the phases: sequential requests on one keep-alive socket (as a browser tab), a webhook receiver.
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { components } from '../../packages/client/src/api-types';

/** The API's bodies as docs/openapi.yaml describes them (the types `npm run openapi` generates). */
export type Api = components['schemas'];
/** A session of a stack with realtime on, as the bench's is. */
export type LiveSession = Api['Session'] & { realtime: Api['RealtimeBlock'] };

/** Waits in 10 ms steps, `tries` of them at most, until `done()` holds (the caller checks what came of it). */
export async function pollUntil(done: () => boolean, tries = 300): Promise<void> {
  for (let i = 0; i < tries && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** Sequential requests on one keep-alive socket, as a browser tab makes them. */
export const tabAgent = () => new Agent({ keepAlive: true, maxSockets: 1 });
const agent = tabAgent();

/** One request to the stack's HTTP API (a session token or a bot secret key as Bearer); a 4xx/5xx fails the run. `T` is the reply's body. */
export async function request<T = unknown>(apiUrl: string, method: string, path: string, opts: { token?: string; json?: unknown; form?: FormData; agent?: Agent } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: Buffer | undefined;
  if (opts.form) {
    const encoded = new Response(opts.form); // multipart/form-data with its boundary
    body = Buffer.from(await encoded.arrayBuffer());
    headers['content-type'] = encoded.headers.get('content-type') as string;
  } else if (opts.json !== undefined) {
    body = Buffer.from(JSON.stringify(opts.json));
    headers['content-type'] = 'application/json';
  }
  if (body) headers['content-length'] = String(body.length);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(new URL(path, apiUrl), { method, headers, agent: opts.agent ?? agent, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no reply in 30 s`)));
    req.on('error', reject);
    req.end(body);
  });
  if (status >= 400) throw new Error(`${method} ${path}: ${status} ${text}`);
  return JSON.parse(text) as T;
}

export interface WebhookReceiver {
  server: ReturnType<typeof createServer>;
  url: string;
  /** Deliveries answered so far. */
  received: { count: number };
}

/** The bench bot's webhook receiver: answers 200 to every delivery at once. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received = { count: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.count++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhook`, received };
}
