// WebSocket $disconnect (best effort on API Gateway): forget the connection and its subscription.
import { removeConnection } from '../centrifuge/hub';
import type { WsEvent, WsResult } from '../centrifuge/ws';

export async function handler(event: WsEvent): Promise<WsResult> {
  await removeConnection(event.requestContext.connectionId);
  return { statusCode: 200 };
}
