// WebSocket $disconnect (best effort on API Gateway): forget the connection and its subscription.
import { removeConnection } from '../core/realtime';
import type { WsEvent, WsResult } from '../core/ws';

export async function handler(event: WsEvent): Promise<WsResult> {
  await removeConnection(event.requestContext.connectionId);
  return { statusCode: 200 };
}
