// WebSocket $connect: the realtime token in the URL (?token=, as the session's realtime.url carries it) is
// verified before the socket opens; without a valid one the handshake gets 401 and nothing is written. The
// connection is recorded bound to the token's user, with a TTL matching API Gateway's 2-hour limit; the
// protocol's connect command must then carry a token of the same user.
import { AppError } from '../shared/errors';
import { verifyToken, type TokenClaims } from '../domain/tokens';
import { assertNotRevoked } from '../domain/revocation';
import { recordConnection } from '../centrifuge/hub';
import { wsFields, type WsEvent, type WsResult } from '../centrifuge/ws';
import { log } from '../shared/log';

export async function handler(event: WsEvent): Promise<WsResult> {
  const token = event.queryStringParameters?.token;
  if (!token) return { statusCode: 401, body: 'A realtime token is required (?token=, as in the session\'s realtime.url)' };
  let claims: TokenClaims;
  try {
    claims = await verifyToken('realtime', token);
    await assertNotRevoked(claims.userId); // an erased user's token opens no socket
  } catch (err) {
    // Bad or expired: the handshake is refused; the client gets a fresh token (getToken) and reconnects.
    if (err instanceof AppError && (err.kind === 'unauthenticated' || err.kind === 'token_expired')) return { statusCode: 401, body: err.message };
    log('error', 'connect failed', wsFields(event), err);
    return { statusCode: 500 };
  }
  await recordConnection(event.requestContext.connectionId, claims);
  return { statusCode: 200 };
}
