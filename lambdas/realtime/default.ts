// WebSocket $default: the Centrifuge protocol subset; replies go back through the route response.
import { handleFrame } from '../centrifuge/protocol';
import { CODES } from '../centrifuge/errors';
import { wsFields, wsScoped, type WsEvent, type WsResult } from '../centrifuge/ws';
import { log } from '../shared/log';

export const handler = wsScoped('realtime', async (event: WsEvent): Promise<WsResult> => {
  const frame = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  try {
    const reply = await handleFrame(event.requestContext.connectionId, frame);
    return reply ? { statusCode: 200, body: reply } : { statusCode: 200 };
  } catch (err) {
    // A temporary error: the client retries with backoff.
    log('error', 'frame failed', wsFields(event), err);
    return { statusCode: 200, body: JSON.stringify({ error: { code: CODES.internal, message: 'internal error', temporary: true } }) };
  }
});
