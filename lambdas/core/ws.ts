// The API Gateway WebSocket event fields our realtime handlers read (same shape from the local gateway).

export interface WsEvent {
  requestContext: {
    connectionId: string;
    routeKey: string;
    eventType?: 'CONNECT' | 'MESSAGE' | 'DISCONNECT';
    requestId?: string;
  };
  queryStringParameters?: Record<string, string | undefined>;
  headers?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded?: boolean;
}

export interface WsResult {
  statusCode: number;
  body?: string;
}

/** One JSON log line with the connection and route; never a token. */
export function wsLog(level: 'info' | 'error', message: string, event: WsEvent, extra: Record<string, unknown> = {}): void {
  const line = JSON.stringify({
    level,
    message,
    request_id: event.requestContext.requestId,
    route: event.requestContext.routeKey,
    connection_id: event.requestContext.connectionId,
    ...extra,
  });
  if (level === 'error') console.error(line);
  else console.log(line);
}
