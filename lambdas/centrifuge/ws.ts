// The API Gateway WebSocket event fields our realtime handlers read (same shape from the local gateway), and the
// wrapper every WebSocket entry point is made with: tagged with its route's declared scope (lib/routes.ts), as the
// HTTP ones are (lambdas/http/scoped.ts); $connect's scope is built here from the URL's token.
import type { ScopeName } from '../access/declarations';
import { realtimeScope, type RealtimeScope } from '../access/realtime';

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

export type WsHandler = ((event: WsEvent) => Promise<WsResult>) & { readonly scope: ScopeName };

/** $connect: the realtime token of the URL (?token=, as the session's realtime.url carries it), its scope built first. */
export function handshakeScoped(run: (scope: RealtimeScope, event: WsEvent) => Promise<WsResult>, refused: (err: unknown, event: WsEvent) => WsResult): WsHandler {
  const handler = async (event: WsEvent) => {
    let scope: RealtimeScope;
    try {
      scope = await realtimeScope('realtime:handshake', event.queryStringParameters?.token);
    } catch (err) {
      return refused(err, event);
    }
    return run(scope, event);
  };
  return Object.assign(handler, { scope: 'realtime:handshake' as const });
}

/** $default ('realtime': each command builds its scope, protocol.ts) and $disconnect ('connection'). */
export const wsScoped = (scope: 'realtime' | 'connection', run: (event: WsEvent) => Promise<WsResult>): WsHandler => Object.assign(run, { scope });
