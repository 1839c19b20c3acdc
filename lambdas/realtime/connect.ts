// WebSocket $connect: a token in the URL (?token=) is verified before the socket opens (401 otherwise);
// the connection is recorded, with a TTL matching API Gateway's 2-hour limit.
import { UnauthorizedError } from '../core/errors';
import { verifyToken, type TokenClaims } from '../core/tokens';
import { recordConnection } from '../core/realtime';
import { wsFields, type WsEvent, type WsResult } from '../core/ws';
import { log } from '../core/log';

export async function handler(event: WsEvent): Promise<WsResult> {
  const token = event.queryStringParameters?.token;
  let claims: TokenClaims | undefined;
  if (token !== undefined) {
    try {
      claims = await verifyToken('realtime', token);
    } catch (err) {
      if (err instanceof UnauthorizedError) return { statusCode: 401, body: err.message };
      log('error', 'connect failed', wsFields(event), err);
      return { statusCode: 500 };
    }
  }
  await recordConnection(event.requestContext.connectionId, claims);
  return { statusCode: 200 };
}
