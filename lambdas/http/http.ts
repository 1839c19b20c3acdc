// HTTP glue for every API Gateway (payload v2) handler: request parsing, the ONE error mapper, JSON replies, logs.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { AppError, InvalidInputError, RateLimitedError, UnavailableError, type ErrorKind } from '../shared/errors';
import { isUnavailable } from '../aws/failures';
import { log } from '../shared/log';

/** What every log line of a request carries; authentication adds the bot and user ids when it knows them. */
export interface LogKeys {
  request_id?: string;
  lambda_request_id?: string;
  route?: string;
  bot_id?: string;
  user_id?: string;
}

export interface HttpRequest {
  event: APIGatewayProxyEventV2;
  logKeys: LogKeys;
  /** Header names in lower case (API Gateway v2 already sends them so). */
  header(name: string): string | undefined;
  query(name: string): string | undefined;
  /** The caller's IP as API Gateway saw it (per-IP rate limits). */
  sourceIp(): string;
  pathParam(name: string): string | undefined;
  /** Raw body bytes (API Gateway base64-encodes binary bodies). */
  rawBody(): Buffer;
  /** The body parsed as a JSON object; anything else is a 400. */
  json(): Record<string, unknown>;
  /** A check running beside the handler's reads: the request answers only if it passes (its error wins). */
  guard(check: Promise<void>): void;
}

export interface HttpReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export type Handler = (event: APIGatewayProxyEventV2, context?: Pick<Context, 'awsRequestId'>) => Promise<APIGatewayProxyStructuredResultV2>;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return { statusCode: status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** The HTTP status of each kind of error (docs/api.md lists them per route). */
const STATUS: Record<ErrorKind, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  token_expired: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
};

function appErrorReply(err: AppError): APIGatewayProxyStructuredResultV2 {
  const retryAfter = err instanceof RateLimitedError ? err.retryAfterSeconds : err.kind === 'unavailable' ? 1 : undefined;
  const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfter))) };
  return jsonReply(STATUS[err.kind], { error: err.message }, headers);
}

/**
 * The ONE HTTP error mapper: an AppError → its kind's status and message (the client's mistake: not logged as
 * an error); a dependency down → 503; anything else → 500. The last two are logged here, once, with their cause.
 */
export function errorReply(err: unknown, keys: LogKeys): APIGatewayProxyStructuredResultV2 {
  if (err instanceof AppError && err.kind !== 'unavailable') return appErrorReply(err);
  // Ids and the error only: never headers or bodies, so tokens and secrets cannot leak into logs.
  if (err instanceof AppError || isUnavailable(err)) {
    log('error', 'dependency unavailable', { ...keys }, err);
    return appErrorReply(err instanceof AppError ? err : new UnavailableError(undefined, { cause: err }));
  }
  log('error', 'unhandled error', { ...keys }, err);
  return jsonReply(500, { error: 'Internal server error' });
}

export function toRequest(event: APIGatewayProxyEventV2, context?: Pick<Context, 'awsRequestId'>): HttpRequest & { guards: Promise<void>[] } {
  let raw: Buffer | undefined;
  const guards: Promise<void>[] = [];
  let parsedJson: Record<string, unknown> | undefined;
  const rawBody = (): Buffer =>
    (raw ??= Buffer.from(event.body ?? '', event.isBase64Encoded ? 'base64' : 'utf8'));
  return {
    event,
    logKeys: { request_id: event.requestContext?.requestId, lambda_request_id: context?.awsRequestId, route: event.routeKey },
    header: (name) => event.headers?.[name.toLowerCase()],
    query: (name) => event.queryStringParameters?.[name],
    sourceIp: () => event.requestContext?.http?.sourceIp ?? 'unknown',
    pathParam: (name) => event.pathParameters?.[name],
    rawBody,
    // Parsed once, however many parameter readers ask (message body, Bot API sender).
    json: () => (parsedJson ??= parseJson()),
    guards,
    guard: (check) => {
      check.catch(() => undefined); // awaited by httpHandler; never an unhandled rejection meanwhile
      guards.push(check);
    },
  };
  function parseJson(): Record<string, unknown> {
    const text = rawBody().toString('utf8');
    if (text.trim() === '') throw new InvalidInputError('Request body must be a JSON object');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new InvalidInputError('Request body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new InvalidInputError('Request body must be a JSON object');
    }
    return parsed as Record<string, unknown>;
  }
}

/**
 * Wraps a thin handler: it parses, calls a flow or an entity, and returns a status and body; errors go to errorReply.
 * One access line per request: its ids, status and duration.
 */
export function httpHandler(fn: (req: HttpRequest) => Promise<HttpReply>): Handler {
  return async (event, context) => {
    const started = performance.now();
    const req = toRequest(event, context);
    let reply: APIGatewayProxyStructuredResultV2;
    try {
      const r = await fn(req);
      await Promise.all(req.guards);
      reply = jsonReply(r.status, r.body, r.headers);
    } catch (err) {
      // A failed guard (an erased user) is the answer, whatever the handler's own outcome.
      const guardError = await Promise.all(req.guards).then(() => undefined, (e: unknown) => e);
      reply = errorReply(guardError ?? err, req.logKeys);
    }
    log('info', 'request', { ...req.logKeys, status: reply.statusCode, duration_ms: Math.round((performance.now() - started) * 10) / 10 });
    return reply;
  };
}
