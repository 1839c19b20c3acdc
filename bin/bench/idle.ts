// The cost of an idle socket-hour, with and without the page's keepalive (packages/client/src/keepalive.ts): one reconnect and one
// keepalive measured unit by unit in the cost phase's windows (cost.ts), priced at the same list prices.
import WebSocket from 'ws';
import type { Invocation } from '../../lib/local/handlers';
import { WS_LIMITS } from '../../lib/local/ws-gateway';
import { WS_ROUTES } from '../../lib/routes';
import { KEEPALIVE_MS } from '../../packages/client/src/keepalive';
import { request, pollUntil, type Api, type LiveSession } from './http';
import { usdOf, type Units } from './cost-model';
import { round } from './stats';

const HOUR_MS = 3600_000;
/** Without a keepalive, API Gateway closes the idle socket every idle timeout and the page opens another. */
export const RECONNECTS_PER_HOUR = Math.ceil(HOUR_MS / WS_LIMITS.idleMs);
export const KEEPALIVES_PER_HOUR = Math.ceil(HOUR_MS / KEEPALIVE_MS);
/** The exact frame centrifuge-js's `send({})` writes. */
const KEEPALIVE_FRAME = JSON.stringify({ send: { data: {} } });
const WS_DEFAULT = WS_ROUTES.find((r) => r.id === 'ws_default')!.entry;

export interface IdleSocketHour {
  /** One reconnect: $connect, the connect and subscribe frame and its reply, the page's catch-up read, $disconnect. */
  reconnect_units: Units;
  /** One keepalive on an open, subscribed socket. */
  keepalive_units: Units;
  reconnects_per_hour: number;
  keepalives_per_hour: number;
  websocket_connection_minutes: number;
  without_keepalive_usd: number;
  with_keepalive_usd: number;
  /** with / without: the keepalive's share of today's idle cost. */
  ratio: number;
}

/** `window` runs an act and returns the units of what the stack did meanwhile (cost.ts); `seen`: the invocations so far. */
export async function idleSocketHour(
  apiUrl: string,
  clientKey: string,
  window: (act: () => Promise<void>) => Promise<Units>,
  seen: () => Invocation[],
  prices: Record<string, number>,
): Promise<IdleSocketHour> {
  let s!: LiveSession;
  let chatId = '';
  await window(async () => {
    s = await request<LiveSession>(apiUrl, 'POST', '/api/client/session', { json: { client_key: clientKey, external_id: 'cost-idle' } });
    chatId = (await request<Api['Chat']>(apiUrl, 'POST', '/api/client/chats', { token: s.session_token, json: { name: 'Support' } })).id;
  });
  /** A socket connected and subscribed to the session's channel. */
  const open = async () => {
    const ws = new WebSocket(s.realtime.url);
    await new Promise((r) => ws.once('open', r));
    const replied = new Promise((r) => ws.once('message', r));
    const mark = seen().length;
    ws.send(`${JSON.stringify({ id: 1, connect: { token: s.realtime.token } })}\n${JSON.stringify({ id: 2, subscribe: { channel: s.realtime.channel } })}`);
    await replied;
    // The reply comes before the frame's invocation ends (the subscribe hands over to live publications after it).
    await until(() => seen().slice(mark).some((i) => i.entry === WS_DEFAULT), 'the subscribe to end');
    return ws;
  };
  const close = async (ws: WebSocket) => {
    const mark = seen().length;
    ws.close();
    await until(() => seen().slice(mark).some((i) => i.entry.includes('disconnect')), '$disconnect');
  };
  // The page reads what it missed each time its subscription takes hold without recovery (the client package's
  // Chat.catchUp: one page of the chat; its CORS preflight is kept 2 hours, so not one per reconnect).
  const reconnect = await window(async () => {
    const ws = await open();
    await request(apiUrl, 'GET', `/api/client/chats/${chatId}/messages`, { token: s.session_token });
    await close(ws);
  });
  let ws!: WebSocket;
  await window(async () => void (ws = await open()));
  const keepalive = await window(async () => {
    const mark = seen().length;
    ws.send(KEEPALIVE_FRAME);
    await until(() => seen().slice(mark).some((i) => i.entry === WS_DEFAULT), 'the keepalive');
  });
  await window(() => close(ws));
  const minutes = HOUR_MS / 60_000;
  const connection = usdOf({ websocket_connection_minutes: minutes }, prices);
  const without = RECONNECTS_PER_HOUR * usdOf(reconnect, prices) + connection;
  const withKeepalive = connection + KEEPALIVES_PER_HOUR * usdOf(keepalive, prices);
  const rounded = (u: Units) => Object.fromEntries(Object.entries(u).map(([k, v]) => [k, round(v, 6)])) as Units;
  return {
    reconnect_units: rounded(reconnect),
    keepalive_units: rounded(keepalive),
    reconnects_per_hour: RECONNECTS_PER_HOUR,
    keepalives_per_hour: KEEPALIVES_PER_HOUR,
    websocket_connection_minutes: minutes,
    without_keepalive_usd: round(without, 10),
    with_keepalive_usd: round(withKeepalive, 10),
    ratio: round(withKeepalive / without, 3),
  };
}

async function until(done: () => boolean, what: string): Promise<void> {
  await pollUntil(done, 1000);
  if (!done()) throw new Error(`cost phase, idle socket: waited 10 s for ${what}`);
}
