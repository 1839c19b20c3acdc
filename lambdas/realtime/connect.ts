// WebSocket $connect: the realtime token in the URL (?token=, as the session's realtime.url carries it) is
// verified before the socket opens; without a valid one the handshake gets 401 and nothing is written. The
// connection is recorded bound to the token's user, with a TTL matching API Gateway's 2-hour limit; the
// protocol's connect command must then carry a token of the same user. Every socket is born here, so the
// user's socket cap is kept here too: past it, the oldest sockets are closed (centrifuge/limits.ts).
import { AppError } from '../shared/errors';
import { recordConnection } from '../centrifuge/hub';
import { enforceSocketCap, userSockets } from '../centrifuge/limits';
import { DisconnectError } from '../centrifuge/errors';
import { handshakeScoped, wsFields, type WsEvent, type WsResult } from '../centrifuge/ws';
import { log } from '../shared/log';

/** A token refused: bad, expired or an erased user's → 401 (the client gets a fresh token and reconnects). */
function refused(err: unknown, event: WsEvent): WsResult {
  if (err instanceof AppError && (err.kind === 'unauthenticated' || err.kind === 'token_expired')) return { statusCode: 401, body: err.message };
  log('error', 'connect failed', wsFields(event), err);
  return { statusCode: 500 };
}

export const handler = handshakeScoped(async ({ claims }, event) => {
  const connectionId = event.requestContext.connectionId;
  // The user's sockets are read beside the write (no added wait); this one, not among them yet, is the newest.
  const [, sockets] = await Promise.all([recordConnection(connectionId, claims), userSockets(claims.userId)]);
  try {
    await enforceSocketCap(claims.userId, connectionId, sockets.includes(connectionId) ? sockets : [...sockets, connectionId]);
  } catch (err) {
    // Newer sockets of the user opened meanwhile: this one is past the cap itself, and does not open.
    if (err instanceof DisconnectError) return { statusCode: 429, body: 'Too many open sockets for this user' };
    throw err;
  }
  return { statusCode: 200 };
}, refused);
