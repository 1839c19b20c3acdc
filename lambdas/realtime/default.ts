// WebSocket $default: the Centrifuge protocol subset; replies go back through the route response.
import { handleFrame, CODES } from '../core/protocol';
import { wsLog, type WsEvent, type WsResult } from '../core/ws';

export async function handler(event: WsEvent): Promise<WsResult> {
  const frame = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : (event.body ?? '');
  try {
    const reply = await handleFrame(event.requestContext.connectionId, frame);
    return reply ? { statusCode: 200, body: reply } : { statusCode: 200 };
  } catch (err) {
    // A temporary error: the client retries with backoff.
    wsLog('error', 'frame failed', event, { error: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err) });
    return { statusCode: 200, body: JSON.stringify({ error: { code: CODES.internal, message: 'internal error', temporary: true } }) };
  }
}
