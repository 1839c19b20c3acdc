// Realtime through the `centrifuge` client: the session's token in the URL of every (re)connect (renewed through a
// new session when it is about to expire or was refused), a recoverable subscription to the user's channel, and a
// keepalive while connected.
import { Centrifuge, type SubscribedContext } from 'centrifuge';
import type { Publication, RealtimeBlock } from './types';
import type { Transport } from './http';
import { KEEPALIVE_MS, keepAlive } from './keepalive';

/** A WebSocket class: the page's own, or `ws` in Node. */
export type WebSocketClass = new (url: string, protocols?: string | string[]) => object;

export type RealtimeStatus = 'connecting' | 'online' | 'offline';

export interface RealtimeHandlers {
  publication(event: Publication): void;
  /** Subscribed (again); `recovered` when the server gave back every publication missed meanwhile. */
  subscribed(recovered: boolean): void;
  status(status: RealtimeStatus, reason?: string): void;
}

export interface Realtime {
  close(): void;
}

/** Whether a JWT expires within the next minute (its payload read, not verified: the server verifies). */
function expiresSoon(token: string): boolean {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number };
    return (payload.exp ?? 0) * 1000 < Date.now() + 60_000;
  } catch {
    return true;
  }
}

export function connectRealtime(rt: RealtimeBlock, transport: Transport, on: RealtimeHandlers, Base: WebSocketClass, keepaliveMs = KEEPALIVE_MS): Realtime {
  // The URL carries the token, checked before the socket opens; a browser's WebSocket sends no header.
  let token = rt.token;
  const renew = async () => (token = (await transport.openSession()).realtime?.token ?? '');
  transport.onSession = (s) => s.realtime && (token = s.realtime.token);
  class TokenSocket extends Base {
    constructor(url: string, protocols?: string | string[]) {
      const withToken = new URL(url);
      withToken.searchParams.set('token', token);
      super(withToken.toString(), protocols);
    }
  }
  const client = new Centrifuge(rt.url, { token: rt.token, getToken: renew, websocket: TokenSocket });
  keepAlive(client, keepaliveMs);
  // Recoverable: on a resubscribe the server hands back what was published while the socket was away.
  const sub = client.newSubscription(rt.channel, { recoverable: true });
  sub.on('publication', (ctx) => on.publication(ctx.data as Publication));
  sub.on('subscribed', (ctx: SubscribedContext) => {
    on.status('online');
    on.subscribed(ctx.wasRecovering && ctx.recovered);
  });
  client.on('connecting', (ctx) => {
    on.status('connecting', ctx.reason);
    // A token past its expiry is refused at the handshake, where the protocol cannot ask for a new one.
    if (expiresSoon(token)) renew().catch(() => undefined);
  });
  client.on('disconnected', (ctx) => on.status('offline', ctx.reason));
  sub.subscribe();
  client.connect();
  return {
    close: () => {
      transport.onSession = undefined;
      // Disconnect first: the keepalive stops on the 'disconnected' event.
      client.disconnect();
      sub.removeAllListeners();
      client.removeAllListeners();
    },
  };
}
