// The keepalive: the protocol's empty async message while connected, so an idle socket stays open.
import type { Centrifuge } from 'centrifuge';

/**
 * How often a connected page sends its keepalive: under API Gateway's 10-minute idle timeout, which would
 * otherwise close an idle socket and make the page reconnect (docs/realtime.md "Keepalive").
 */
export const KEEPALIVE_MS = 9 * 60_000;

/**
 * While the client is connected, sends the protocol's async message with empty data (`send({})`) every
 * `everyMs`: the server answers nothing and writes nothing for it. Returns what stops it.
 */
export function keepAlive(client: Centrifuge, everyMs = KEEPALIVE_MS): () => void {
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    clearInterval(timer);
    timer = undefined;
  };
  client.on('connected', () => {
    stop();
    timer = setInterval(() => void client.send({}).catch(() => undefined), everyMs);
  });
  client.on('connecting', stop);
  client.on('disconnected', stop);
  return stop;
}
