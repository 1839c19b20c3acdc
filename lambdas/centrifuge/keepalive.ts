// The page's keepalive: the protocol's async message with nothing in it (`send` with empty data, centrifuge-js's
// `send({})`), sent every few minutes so API Gateway does not close an idle socket. It is answered with nothing
// and costs one invocation and no DynamoDB call: it skips the socket's command budget, which writes a rate
// window per frame (limits.ts). It is bounded here instead, per socket and instance: one a minute
// (SOCKET_KEEPALIVE_FREE_EVERY_MS; the page sends one every 9, packages/client/src/keepalive.ts) goes free, any more are metered
// as every other command (so a flood of them still closes the socket with 3013).
import { config } from '../shared/config';
/** Sockets remembered per instance (the oldest forgotten first: it then gets one more free keepalive). */
const MAX_SOCKETS = 10_000;
const lastFree = new Map<string, number>();

/** Whether the frame is a keepalive and nothing else: one `{"send":{"data":{}}}`. */
export function isKeepalive(frame: string): boolean {
  if (frame.length > 64) return false;
  try {
    const cmd = JSON.parse(frame) as unknown;
    if (typeof cmd !== 'object' || cmd === null || Array.isArray(cmd) || Object.keys(cmd).join() !== 'send') return false;
    const send = (cmd as { send: unknown }).send;
    if (typeof send !== 'object' || send === null || Object.keys(send).join() !== 'data') return false;
    const data = (send as { data: unknown }).data;
    return typeof data === 'object' && data !== null && !Array.isArray(data) && Object.keys(data).length === 0;
  } catch {
    return false;
  }
}

/** Takes this socket's free keepalive if its minute allows one (false: meter it as any command). */
export function takeFreeKeepalive(connectionId: string, now = Date.now()): boolean {
  const last = lastFree.get(connectionId);
  if (last !== undefined && now - last < config().keepaliveFreeEveryMs) return false;
  lastFree.delete(connectionId);
  if (lastFree.size >= MAX_SOCKETS) lastFree.delete(lastFree.keys().next().value as string);
  lastFree.set(connectionId, now);
  return true;
}
