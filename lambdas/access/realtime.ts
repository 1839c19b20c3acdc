// The realtime token's scope (the WebSocket's way in; ./scopes.ts has the HTTP callers'): `realtime` for the
// protocol's connect and refresh commands, `realtime:handshake` for $connect (./declarations.ts says why the
// bot's switches are left to the connect command there).
import { openBotOfToken } from '../policies/bot-access';
import { assertNotRevoked } from '../policies/revocation';
import { verifyToken, type VerifiedClaims } from '../adapters/tokens';
import { UnauthenticatedError } from '../shared/errors';

export interface RealtimeScope {
  kind: 'realtime';
  claims: VerifiedClaims;
}

/** A realtime token, verified; its user not erased and (except at the handshake) its bot open. The reads run side by side. */
export async function realtimeScope(name: 'realtime' | 'realtime:handshake', token: unknown): Promise<RealtimeScope> {
  if (typeof token !== 'string' || token === '') {
    throw new UnauthenticatedError(name === 'realtime' ? 'token required' : "A realtime token is required (?token=, as in the session's realtime.url)");
  }
  const claims = await verifyToken('realtime', token);
  await Promise.all([name === 'realtime' && openBotOfToken('realtime', claims.botId), assertNotRevoked(claims.userId)]);
  return { kind: 'realtime', claims };
}
