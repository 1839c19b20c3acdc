// The chat page's realtime connection: the real `centrifuge` client on the session's realtime block, the token
// in the URL at every (re)connect (renewed through a new session when it is about to expire or was refused),
// each publication of the user's channel handed to the page, and a keepalive while connected.
import { Centrifuge, type Subscription } from 'centrifuge';
import type { Api, Publication, Schemas } from './api';
import { KEEPALIVE_MS, keepAlive } from './keepalive';

export interface LiveHandlers {
  publication(event: Publication): void;
  /** Subscribed (again): what was sent before the subscription took hold is for the page to fetch. */
  subscribed(): void;
  status(text: string): void;
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

export function connectRealtime(rt: Schemas['RealtimeBlock'], api: Api, on: LiveHandlers, keepaliveMs = KEEPALIVE_MS): void {
  // The realtime URL carries the token: the server checks it before the socket opens. Every (re)connect
  // puts the latest token in the URL, so a token renewed below is the one the handshake sees.
  let token = rt.token;
  // An expired token: get a fresh session (same external_id) and use its realtime token.
  const renew = async () => (token = (await api.startSession()).realtime?.token ?? '');
  class TokenSocket extends WebSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      const withToken = new URL(url);
      withToken.searchParams.set('token', token);
      super(withToken, protocols);
    }
  }
  const client = new Centrifuge(rt.url, { token: rt.token, getToken: renew, websocket: TokenSocket });
  keepAlive(client, keepaliveMs);
  const sub: Subscription = client.newSubscription(rt.channel);
  sub.on('publication', (ctx) => on.publication(ctx.data as Publication));
  sub.on('subscribed', () => {
    on.status('online');
    on.subscribed();
  });
  client.on('connecting', () => {
    on.status('connecting…');
    // A token past its expiry is refused at the handshake, where the protocol cannot ask for a new one:
    // renew it before the next attempt (the client waits at least half a second between attempts).
    if (expiresSoon(token)) renew().catch(() => undefined);
  });
  client.on('disconnected', (ctx) => on.status(`offline (${ctx.reason})`));
  sub.subscribe();
  client.connect();
}
