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

/** Log fields of a WebSocket event: its ids, never its body (it may hold a token). */
export const wsFields = (event: WsEvent): Record<string, unknown> => ({
  request_id: event.requestContext.requestId,
  route: event.requestContext.routeKey,
  connection_id: event.requestContext.connectionId,
});
