// HTTP glue for every API Gateway (payload v2) handler: request parsing, the ONE error mapper, JSON replies, logs.
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { BadRequestError, HttpError, ServiceUnavailableError, THROTTLING_ERRORS } from './errors';
import { log } from './log';

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

const UNAVAILABLE_NAMES = new Set(['TimeoutError', 'RequestTimeout', ...THROTTLING_ERRORS, 'ServiceUnavailable', 'SlowDown']);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);
/** Refusals that no retry can change, whatever status carried them: a 500, never a 503 with Retry-After. */
const PERMANENT_NAMES = new Set(['ValidationException', 'SerializationException', 'ItemCollectionSizeLimitExceededException']);

/**
 * An AWS dependency unreachable, timed out, throttling or failing (5xx) after the SDK's retries: the request
 * may succeed if retried shortly. Wrapped errors (Powertools Parameters wraps the SDK's) are read by cause.
 */
function isUnavailable(err: unknown, depth = 0): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown } | undefined;
  if (!e || typeof e !== 'object' || PERMANENT_NAMES.has(e.name ?? '')) return false;
  if (UNAVAILABLE_NAMES.has(e.name ?? '') || UNAVAILABLE_CODES.has(e.code ?? '') || (e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  return depth < 3 && isUnavailable(e.cause, depth + 1);
}

/**
 * The ONE error mapper: HttpError → its status and message (the client's mistake: not logged as an error);
 * a dependency down → 503; anything else → 500. The last two are logged here, once, with their cause.
 */
export function errorReply(err: unknown, keys: LogKeys): APIGatewayProxyStructuredResultV2 {
  if (err instanceof HttpError) return jsonReply(err.statusCode, { error: err.message }, err.headers);
  // Ids and the error only: never headers or bodies, so tokens and secrets cannot leak into logs.
  if (isUnavailable(err)) {
    log('error', 'dependency unavailable', { ...keys }, err);
    const unavailable = new ServiceUnavailableError();
    return jsonReply(unavailable.statusCode, { error: unavailable.message }, unavailable.headers);
  }
  log('error', 'unhandled error', { ...keys }, err);
  return jsonReply(500, { error: 'Internal server error' });
}

export function toRequest(event: APIGatewayProxyEventV2, context?: Pick<Context, 'awsRequestId'>): HttpRequest {
  let raw: Buffer | undefined;
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
  };
  function parseJson(): Record<string, unknown> {
    const text = rawBody().toString('utf8');
    if (text.trim() === '') throw new BadRequestError('Request body must be a JSON object');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BadRequestError('Request body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new BadRequestError('Request body must be a JSON object');
    }
    return parsed as Record<string, unknown>;
  }
}

/**
 * Wraps a thin handler: it parses, calls the domain, and returns a status and body; errors go to errorReply.
 * One access line per request: its ids, status and duration.
 */
export function httpHandler(fn: (req: HttpRequest) => Promise<HttpReply>): Handler {
  return async (event, context) => {
    const started = performance.now();
    const req = toRequest(event, context);
    let reply: APIGatewayProxyStructuredResultV2;
    try {
      const r = await fn(req);
      reply = jsonReply(r.status, r.body, r.headers);
    } catch (err) {
      reply = errorReply(err, req.logKeys);
    }
    log('info', 'request', { ...req.logKeys, status: reply.statusCode, duration_ms: Math.round((performance.now() - started) * 10) / 10 });
    return reply;
  };
}
