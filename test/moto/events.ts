// The IAM tier's events, built as API Gateway and Lambda deliver them (the local gateways' builders): HTTP API
// requests, WebSocket routes and SQS batches.
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, SQSEvent } from 'aws-lambda';
import { httpApiEvent } from '../../lib/local/http-gateway';
import { wsApiEvent } from '../../lib/local/ws-gateway';
import type { RouteDef } from '../../lib/routes';
import { REGION } from './template';

export interface HttpRequestSpec {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: string | Buffer;
  contentType?: string;
}

/** An HTTP API payload v2 event for a route, built as the local gateway builds it (lib/local/http-gateway.ts). */
export function httpEvent(route: RouteDef, spec: HttpRequestSpec = {}): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = { host: 'motoapi.execute-api.us-east-1.amazonaws.com', 'user-agent': 'moto-tier', ...spec.headers };
  if (spec.contentType) headers['content-type'] = spec.contentType;
  return httpApiEvent({
    method: route.method,
    routePath: route.path,
    params: spec.params ?? {},
    rawPath: route.path.replace(/\{(\w+)\}/g, (_m, k: string) => spec.params?.[k] ?? ''),
    rawQueryString: new URLSearchParams(spec.query ?? {}).toString(),
    headers,
    body: spec.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body),
    sourceIp: '203.0.113.7',
    protocol: 'HTTP/1.1',
    accountId: '123456789012',
    apiId: 'motoapi',
  });
}

export const json = (value: unknown): HttpRequestSpec => ({ body: JSON.stringify(value), contentType: 'application/json' });

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number };
export const bodyOf = (r: HttpResult): unknown => (r.body ? JSON.parse(r.body) : undefined);

/** A multipart body with one `file` part and text fields. */
export function multipart(name: string, mime: string, bytes: Buffer, fields: Record<string, string> = {}): HttpRequestSpec {
  const boundary = `----moto${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${mime}\r\n\r\n`));
  parts.push(bytes, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A WebSocket API event ($connect, $default, $disconnect), built as the local gateway builds it (lib/local/ws-gateway.ts). */
export function wsEvent(routeKey: '$connect' | '$default' | '$disconnect', connectionId: string, extra: { query?: Record<string, string>; body?: string } = {}) {
  const headers = routeKey === '$connect' ? { host: 'motoapi.execute-api.us-east-1.amazonaws.com' } : undefined;
  return wsApiEvent(routeKey, connectionId, { ...extra, headers });
}

/** An SQS event source batch from messages received from the queue. */
export function sqsEvent(queueArn: string, messages: { MessageId?: string; ReceiptHandle?: string; Body?: string; MD5OfBody?: string; Attributes?: Record<string, string> }[]): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body!,
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: m.Attributes?.SenderId ?? 'AIDA',
        ApproximateFirstReceiveTimestamp: m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: REGION,
    })),
  };
}
