// A local stand-in for API Gateway's WebSocket API: the same $connect/$default/$disconnect events, route
// responses sent back on the socket, and the @connections management API (POST, GET, DELETE) on the same
// port, so the same signed PostToConnection calls work unchanged with an endpoint override.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { WS_ROUTES, type WsRouteDef } from '../routes';
import { handlerLoader } from './handlers';
import type { WsEvent, WsResult } from '../../lambdas/core/ws';

type WsHandler = (event: WsEvent) => Promise<WsResult>;

/** API Gateway's limits: 10 minutes idle, 2 hours in all; frames up to 128 KB. */
export const WS_LIMITS = { idleMs: 10 * 60_000, maxLifetimeMs: 2 * 3600_000, maxFrameBytes: 128 * 1024 };

interface Connection {
  socket: WebSocket;
  connectedAt: number;
  lastActiveAt: number;
  sourceIp: string;
  userAgent: string;
  /** Frames of one socket are handled one after another. */
  queue: Promise<void>;
  idleTimer?: NodeJS.Timeout;
  lifetimeTimer?: NodeJS.Timeout;
}

export interface WsGatewayOptions {
  host: string;
  port: number;
  root: string;
  routes?: WsRouteDef[];
  idleMs?: number;
}

export interface WsGateway {
  server: Server;
  connections: Map<string, Connection>;
  close(): Promise<void>;
}

/** API Gateway connection ids look like "L0SM9cOFvHcCIhw=". */
const newConnectionId = () => randomBytes(10).toString('base64');

export async function startWsGateway(options: WsGatewayOptions): Promise<WsGateway> {
  const routes = options.routes ?? WS_ROUTES;
  const idleMs = options.idleMs ?? WS_LIMITS.idleMs;
  const load = handlerLoader<WsHandler>(options.root);
  const handlerFor = (routeKey: WsRouteDef['routeKey']) => {
    const route = routes.find((r) => r.routeKey === routeKey);
    if (!route) throw new Error(`no WebSocket route ${routeKey}`);
    return load(route.entry);
  };
  const connections = new Map<string, Connection>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_LIMITS.maxFrameBytes });

  const event = (routeKey: WsRouteDef['routeKey'], connectionId: string, req?: IncomingMessage, body?: string): WsEvent => {
    const url = req ? new URL(req.url ?? '/', 'http://local') : undefined;
    return {
      requestContext: {
        connectionId,
        routeKey,
        eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
        requestId: randomUUID(),
      },
      ...(url && { queryStringParameters: Object.fromEntries(url.searchParams) }),
      ...(req && { headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v])) }),
      ...(body !== undefined && { body, isBase64Encoded: false }),
    };
  };

  const call = async (routeKey: WsRouteDef['routeKey'], ev: WsEvent): Promise<WsResult> => {
    try {
      return await (await handlerFor(routeKey))(ev);
    } catch (err) {
      console.error(JSON.stringify({ level: 'error', message: `${routeKey} crashed`, error: String((err as Error)?.stack ?? err) }));
      return { statusCode: 500 };
    }
  };

  const touch = (conn: Connection) => {
    conn.lastActiveAt = Date.now();
    clearTimeout(conn.idleTimer);
    conn.idleTimer = setTimeout(() => conn.socket.close(1001, 'Going away'), idleMs);
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const connectionId = newConnectionId();
    const result = await call('$connect', event('$connect', connectionId, req));
    if (result.statusCode !== 200) {
      // API Gateway refuses the handshake with the $connect status.
      socket.end(`HTTP/1.1 ${result.statusCode} ${result.statusCode === 401 ? 'Unauthorized' : 'Forbidden'}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn: Connection = {
        socket: ws,
        connectedAt: Date.now(),
        lastActiveAt: Date.now(),
        sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
        userAgent: String(req.headers['user-agent'] ?? ''),
        queue: Promise.resolve(),
      };
      connections.set(connectionId, conn);
      touch(conn);
      conn.lifetimeTimer = setTimeout(() => ws.close(1001, 'Going away'), WS_LIMITS.maxLifetimeMs);
      ws.on('message', (data) => {
        touch(conn);
        const body = data.toString();
        conn.queue = conn.queue.then(async () => {
          const res = await call('$default', event('$default', connectionId, undefined, body));
          if (res.body && ws.readyState === ws.OPEN) ws.send(res.body);
        });
      });
      ws.on('close', () => {
        clearTimeout(conn.idleTimer);
        clearTimeout(conn.lifetimeTimer);
        connections.delete(connectionId);
        void conn.queue.then(() => call('$disconnect', event('$disconnect', connectionId)));
      });
      ws.on('error', () => ws.terminate());
    });
  };

  const management = async (req: IncomingMessage, res: ServerResponse, connectionId: string) => {
    const conn = connections.get(connectionId);
    const gone = () => {
      res.writeHead(410, { 'content-type': 'application/json', 'x-amzn-errortype': 'GoneException' });
      res.end(JSON.stringify({ message: `Connection ${connectionId} is gone` }));
    };
    if (req.method === 'POST') {
      // Events, not `for await`: a fan-out makes one post per socket, all on this one thread.
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      await new Promise((resolveBody, reject) => req.once('end', resolveBody).once('error', reject));
      if (!conn || conn.socket.readyState !== conn.socket.OPEN) return gone();
      const data = Buffer.concat(chunks);
      if (data.length > WS_LIMITS.maxFrameBytes) {
        res.writeHead(413, { 'content-type': 'application/json', 'x-amzn-errortype': 'PayloadTooLargeException' });
        return res.end(JSON.stringify({ message: 'Message too long' }));
      }
      conn.socket.send(data, { binary: false }); // a text frame, as API Gateway sends
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end();
    }
    if (!conn) return gone();
    if (req.method === 'DELETE') {
      conn.socket.close(1001, 'Going away');
      res.writeHead(204);
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ConnectedAt: new Date(conn.connectedAt).toISOString(),
        LastActiveAt: new Date(conn.lastActiveAt).toISOString(),
        Identity: { SourceIp: conn.sourceIp, UserAgent: conn.userAgent },
      }),
    );
  };

  const server = createServer((req, res) => {
    const m = /^\/@connections\/([^/?]+)$/.exec((req.url ?? '').split('?')[0]);
    if (m && ['POST', 'GET', 'DELETE'].includes(req.method ?? '')) {
      management(req, res, decodeURIComponent(m[1])).catch(() => {
        res.writeHead(500);
        res.end();
      });
      return;
    }
    res.writeHead(426, { 'content-type': 'text/plain' });
    res.end('WebSocket API: connect with a WebSocket client');
  });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    void onUpgrade(req, socket, head);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  return {
    server,
    connections,
    close: async () => {
      for (const c of connections.values()) c.socket.terminate();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
