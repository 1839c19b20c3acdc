// A proxy in front of the stack's HTTP API that a test steers: the network faults a client must survive (a reply
// lost after the server acted, a 429 or 503 with Retry-After, an expired token) and a session without its
// realtime block or with another token, all on real requests to the real stack. It records each request it saw.
import { createServer, type IncomingMessage } from 'node:http';
import { freePort } from './ports';
import type { Session } from './contract';

/** What to do with the next request a rule matches (each rule is used once). */
export type Fault =
  /** Forward it, then close the connection instead of answering: the server acted, the client heard nothing. */
  | { kind: 'lose-reply' }
  /** Answer this status with Retry-After, without forwarding. */
  | { kind: 'status'; status: 429 | 503; retryAfter: number }
  /** Forward it with this Authorization header instead (an expired token: the server answers 401). */
  | { kind: 'authorization'; value: string };

export interface Seen {
  at: number;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** What the proxy did: forwarded, or the fault's kind. */
  outcome: string;
}

export interface FaultProxy {
  url: string;
  seen: Seen[];
  /** The next request whose method and path match gets the fault. */
  inject(method: string, path: RegExp, fault: Fault): void;
  /** Sessions lose their realtime block (an environment with realtime off, as the client sees it). */
  stripRealtime: boolean;
  /** Changes the next session response (used once), e.g. to hand out an expired realtime token. */
  rewriteSession?: (session: Session) => Promise<Session>;
  close(): void;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const rules: { method: string; path: RegExp; fault: Fault }[] = [];
  const seen: Seen[] = [];
  const proxy: FaultProxy = { url: '', seen, inject: (method, path, fault) => void rules.push({ method, path, fault }), stripRealtime: false, close: () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const i = rules.findIndex((r) => r.method === req.method && r.path.test(path));
      const fault = i >= 0 ? rules.splice(i, 1)[0].fault : undefined;
      seen.push({ at: Date.now(), method: req.method ?? '', path, headers: req.headers, outcome: fault?.kind ?? 'forwarded' });
      if (fault?.kind === 'status') {
        res.writeHead(fault.status, { 'content-type': 'application/json', 'retry-after': String(fault.retryAfter) });
        res.end(JSON.stringify({ error: 'Injected by the test proxy' }));
        return;
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers.set(k, v);
      if (fault?.kind === 'authorization') headers.set('authorization', fault.value);
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      void fetch(target + path, { method: req.method, headers, body })
        .then(async (r) => {
          let text = Buffer.from(await r.arrayBuffer());
          if (fault?.kind === 'lose-reply') return void req.socket.destroy();
          if (req.method === 'POST' && path === '/api/client/session' && r.ok && (proxy.stripRealtime || proxy.rewriteSession)) {
            let session = JSON.parse(text.toString()) as Session;
            if (proxy.stripRealtime) delete session.realtime;
            const rewrite = proxy.rewriteSession;
            proxy.rewriteSession = undefined;
            if (rewrite) session = await rewrite(session);
            text = Buffer.from(JSON.stringify(session));
          }
          const out: Record<string, string> = {};
          r.headers.forEach((v, k) => k !== 'content-length' && k !== 'content-encoding' && k !== 'transfer-encoding' && (out[k] = v));
          res.writeHead(r.status, out);
          res.end(text);
        })
        .catch(() => req.socket.destroy());
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.close = () => {
    server.closeAllConnections();
    server.close();
  };
  return proxy;
}
