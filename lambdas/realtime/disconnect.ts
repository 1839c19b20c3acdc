// WebSocket $disconnect (best effort on API Gateway): forget the connection and its subscription.
import { removeConnection } from '../centrifuge/hub';
import { wsScoped, type WsEvent, type WsResult } from '../centrifuge/ws';

export const handler = wsScoped('connection', async (event: WsEvent): Promise<WsResult> => {
  await removeConnection(event.requestContext.connectionId);
  return { statusCode: 200 };
});
