// A local stand-in for API Gateway's HTTP API: same routes (lib/routes.ts), same payload v2 events, same CORS.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { CORS, NOT_FOUND, ROUTES, type RouteDef } from '../routes';
import { handlerLoader } from './handlers';

/** API Gateway's own request limit (the function's 6 MB payload limit is reported by the handler's 413). */
const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's limit on the request line and headers together. */
const MAX_HEAD_BYTES = 10_240;
const HEAD_TOO_LARGE_BODY = '{"message":"Request Header Fields Too Large"}';
const EMPTY = Buffer.alloc(0);
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

type LambdaHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export interface RouteMatch {
  route: RouteDef;
  params: Record<string, string>;
}

export function matchRoute(routes: RouteDef[], method: string, path: string): RouteMatch | undefined {
  const parts = path.split('/');
  for (const route of routes) {
    if (route.method !== method) continue;
    const template = route.path.split('/');
    if (template.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = template.every((seg, i) => {
      const m = /^\{(\w+)\}$/.exec(seg);
      if (!m) return seg === parts[i];
      if (parts[i] === '') return false;
      params[m[1]] = safeDecode(parts[i]);
      return true;
    });
    if (ok) return { route, params };
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** What an HTTP API payload v2 event is made of: the request as it arrived, and the route it matched. */
export interface HttpApiRequest {
  method: string;
  /** The route's path template, or '$default' when none matched. */
  routePath: string;
  params: Record<string, string>;
  rawPath: string;
  rawQueryString: string;
  /** Header names in lower case, one value each (cookies apart). */
  headers: Record<string, string>;
  cookies?: string[];
  body: Buffer;
  sourceIp: string;
  protocol: string;
  /** The account and API ids in requestContext. */
  accountId?: string;
  apiId?: string;
}

/** An HTTP API payload v2 event, as API Gateway builds it (the local gateway's, and the IAM tier's). */
export function httpApiEvent(r: HttpApiRequest): APIGatewayProxyEventV2 {
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(r.rawQueryString)) query[k] = k in query ? `${query[k]},${v}` : v;
  const binary = r.body.length > 0 && !TEXT_TYPES.test(r.headers['content-type'] ?? '');
  const now = new Date();
  const routeKey = r.routePath === '$default' ? '$default' : `${r.method} ${r.routePath}`;
  const host = r.headers.host ?? 'localhost';
  return {
    version: '2.0',
    routeKey,
    rawPath: r.rawPath,
    rawQueryString: r.rawQueryString,
    cookies: r.cookies,
    headers: r.headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: Object.keys(r.params).length ? r.params : undefined,
    requestContext: {
      accountId: r.accountId ?? 'local',
      apiId: r.apiId ?? 'local',
      domainName: host,
      domainPrefix: host.split('.')[0],
      http: { method: r.method, path: r.rawPath, protocol: r.protocol, sourceIp: r.sourceIp, userAgent: r.headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: r.body.length ? r.body.toString(binary ? 'base64' : 'utf8') : undefined,
    isBase64Encoded: binary,
  };
}

/** The event of a request that reached the local gateway. */
export function buildHttpEvent(
  req: IncomingMessage,
  body: Buffer,
  match: RouteMatch,
  rawPath: string,
  rawQueryString: string,
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return httpApiEvent({
    method: match.route.method,
    routePath: match.route.path,
    params: match.params,
    rawPath,
    rawQueryString,
    headers,
    cookies: req.headers.cookie?.split(/;\s*/),
    body,
    sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
    protocol: `HTTP/${req.httpVersion}`,
  });
}

function corsHeaders(req: IncomingMessage): Record<string, string> {
  return req.headers.origin
    ? { 'access-control-allow-origin': CORS.allowOrigins.join(','), 'access-control-expose-headers': CORS.exposeHeaders.join(',') }
    : {};
}

/**
 * A whole reply with its Content-Length, as API Gateway sends it (node:http would frame it chunked). A text
 * body stays a string: node:http writes it with the head in one write.
 */
function send(res: ServerResponse, status: number, headers: Record<string, string>, body?: string | Buffer): void {
  if (status !== 204 && status !== 304) headers['content-length'] = String(body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * The whole request body, or undefined once it passes API Gateway's limit (the rest is then not read). A
 * request with neither length nor chunked framing has none (RFC 9112 6.3): its end is not waited for.
 */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return EMPTY;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export interface HttpGatewayOptions {
  host: string;
  port: number;
  /** Project root: route entries are resolved from it. */
  root: string;
  routes?: RouteDef[];
  /** Extra handling before the API routes (e.g. the static web page); return true when handled. */
  fallback?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;
}

export async function startHttpGateway(options: HttpGatewayOptions): Promise<Server> {
  const routes = options.routes ?? ROUTES;
  const load = handlerLoader<LambdaHandler>(options.root);

  // node:http ignores what a listener returns: the body answers its own errors.
  const server = createServer({ maxHeaderSize: MAX_HEAD_BYTES }, (req, res) => void (async () => {
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      const rawPath = url.pathname;
      const rawQueryString = (req.url ?? '').split('?')[1] ?? '';
      const method = (req.method ?? 'GET').toUpperCase();

      if (method === 'OPTIONS' && req.headers.origin && req.headers['access-control-request-method']) {
        return send(res, 204, {
          'access-control-allow-origin': CORS.allowOrigins.join(','),
          'access-control-allow-methods': CORS.allowMethods.join(','),
          'access-control-allow-headers': CORS.allowHeaders.join(','),
          'access-control-max-age': String(CORS.maxAgeSeconds),
        });
      }
      let match = matchRoute(routes, method, rawPath);
      if (!match) {
        if (options.fallback && (await options.fallback(req, res, rawPath))) return;
        // The HTTP API's default route, as on AWS.
        match = { route: { ...NOT_FOUND, method: method as 'GET', path: '$default' }, params: {} };
      }

      const body = await readBody(req);
      if (!body) return send(res, 413, { 'content-type': 'application/json', connection: 'close', ...corsHeaders(req) }, '{"message":"Request Entity Too Large"}');
      const event = buildHttpEvent(req, body, match, rawPath, rawQueryString);
      const result = await (await load(match.route.entry))(event);
      const headers: Record<string, string> = { ...corsHeaders(req) };
      for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
      const replyBody = result.isBase64Encoded && result.body !== undefined ? Buffer.from(result.body, 'base64') : result.body;
      send(res, result.statusCode ?? 200, headers, replyBody);
    } catch (err) {
      // What API Gateway answers when the function itself fails.
      console.error(JSON.stringify({ level: 'error', message: 'handler crashed', error: String((err as Error)?.stack ?? err) }));
      if (!res.headersSent) send(res, 500, { 'content-type': 'application/json' }, '{"message":"Internal Server Error"}');
      else res.destroy();
    }
  })());
  // Idle keep-alive connections outlive the clients' own idle limits (fetch's is 4 s): with Node's default
  // of 5 s, a request sent on a connection the server was just closing failed with "other side closed".
  server.keepAliveTimeout = 65_000;
  // A request line and headers over the limit never reach a route: API Gateway's own {message}, as for 10 MB.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const [status, body] = err.code === 'HPE_HEADER_OVERFLOW' ? ['431 Request Header Fields Too Large', HEAD_TOO_LARGE_BODY] : ['400 Bad Request', '{"message":"Bad Request"}'];
    socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  return server;
}
