// A local stand-in for API Gateway's WebSocket API: the same $connect/$default/$disconnect events, route
// responses sent back on the socket, and the @connections management API (POST, GET, DELETE) on the same
// port, so the same signed PostToConnection calls work unchanged with an endpoint override. node:http and ws
// serve it all.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { WS_ROUTES, type WsRouteDef } from '../routes';
import { handlerLoader } from './handlers';
import type { WsEvent, WsResult } from '../../lambdas/centrifuge/ws';

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

/**
 * A WebSocket API event as API Gateway delivers it to a route's function: the $connect request's query and
 * headers, a frame's body (the local gateway's, and the IAM tier's).
 */
export function wsApiEvent(
  routeKey: WsRouteDef['routeKey'],
  connectionId: string,
  r: { query?: Record<string, string>; headers?: Record<string, string>; body?: string } = {},
): WsEvent {
  return {
    requestContext: {
      connectionId,
      routeKey,
      eventType: routeKey === '$connect' ? 'CONNECT' : routeKey === '$disconnect' ? 'DISCONNECT' : 'MESSAGE',
      requestId: randomUUID(),
    },
    ...(r.query && { queryStringParameters: r.query }),
    ...(r.headers && { headers: r.headers }),
    ...(r.body !== undefined && { body: r.body, isBase64Encoded: false }),
  };
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

interface ManagementReply {
  status: number;
  /** API Gateway's x-amzn-errortype of an error. */
  errorType?: string;
  body?: string;
  type?: string;
}

const MANAGEMENT_PATH = /^\/@connections\/([^/?]+)$/;
const MANAGEMENT_METHODS = new Set(['POST', 'GET', 'DELETE']);
const POSTED: ManagementReply = { status: 200, body: '' };
const TEXT_FRAME = { binary: false };
const NOT_WEBSOCKET: ManagementReply = { status: 426, type: 'text/plain', body: 'WebSocket API: connect with a WebSocket client' };
const replyHeaders = (r: ManagementReply): Record<string, string> => ({
  ...(r.body !== undefined && { 'content-type': r.type ?? 'application/json' }),
  ...(r.errorType && { 'x-amzn-errortype': r.errorType }),
  ...(r.status !== 204 && { 'content-length': String(Buffer.byteLength(r.body ?? '')) }),
});

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

  const event = (routeKey: WsRouteDef['routeKey'], connectionId: string, req?: IncomingMessage, body?: string): WsEvent =>
    wsApiEvent(routeKey, connectionId, {
      ...(req && {
        query: Object.fromEntries(new URL(req.url ?? '/', 'http://local').searchParams),
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')])),
      }),
      body,
    });

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
        const body = (data as Buffer).toString(); // ws hands a frame over as one Buffer (its default binaryType)
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

  /** The @connections API: the reply to one request, from its method, connection id and body. */
  const manage = (method: string, connectionId: string, body: Buffer): ManagementReply => {
    const conn = connections.get(connectionId);
    const gone = (): ManagementReply => ({ status: 410, errorType: 'GoneException', body: JSON.stringify({ message: `Connection ${connectionId} is gone` }) });
    if (method === 'POST') {
      if (!conn || conn.socket.readyState !== conn.socket.OPEN) return gone();
      if (body.length > WS_LIMITS.maxFrameBytes) return { status: 413, errorType: 'PayloadTooLargeException', body: JSON.stringify({ message: 'Message too long' }) };
      conn.socket.send(body, TEXT_FRAME); // a text frame, as API Gateway sends
      return POSTED;
    }
    if (!conn) return gone();
    if (method === 'DELETE') {
      conn.socket.close(1001, 'Going away');
      return { status: 204 };
    }
    const info = { ConnectedAt: new Date(conn.connectedAt).toISOString(), LastActiveAt: new Date(conn.lastActiveAt).toISOString(), Identity: { SourceIp: conn.sourceIp, UserAgent: conn.userAgent } };
    return { status: 200, body: JSON.stringify(info) };
  };

  /** What a request to this port gets: the @connections API, or a hint to connect with a WebSocket client. */
  const answer = (method: string, target: string, body: Buffer): ManagementReply => {
    const m = MANAGEMENT_PATH.exec(target.split('?')[0]);
    if (!m || !MANAGEMENT_METHODS.has(method)) return NOT_WEBSOCKET;
    let connectionId: string;
    try {
      connectionId = decodeURIComponent(m[1]);
    } catch {
      return { status: 400, errorType: 'BadRequestException', body: JSON.stringify({ message: 'Invalid connection id' }) };
    }
    return manage(method, connectionId, body);
  };

  // node:http serves both: WebSocket handshakes (upgrade) and the @connections API on keep-alive connections.
  const server = createServer({ noDelay: true }, (req, res) => {
    res.sendDate = false; // API Gateway's @connections replies carry no Date
    // The SDK and our publisher send bodies by Content-Length; a chunked body is refused as API Gateway does.
    if (req.headers['transfer-encoding']) {
      res.writeHead(411, { 'content-length': '0', connection: 'close' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = answer(req.method ?? '', req.url ?? '', Buffer.concat(chunks));
      // Written after the next turn's I/O: a fan-out's posts arrive together, their frames go out to the
      // sockets at once, and the subscribers read them before the publisher gets its replies. Here publisher,
      // gateway and subscribers share one thread; on AWS API Gateway's replies never hold up its frames.
      setImmediate(() => setImmediate(() => !res.destroyed && res.writeHead(r.status, replyHeaders(r)).end(r.body)));
    });
  });
  // The publisher's SDK keeps its sockets open between fan-outs, as API Gateway lets it.
  server.keepAliveTimeout = 0;
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
      server.closeAllConnections(); // keep-alive HTTP connections too
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
