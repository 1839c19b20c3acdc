// Free TCP ports for stacks started by tools and tests (tried, then released).
import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999): a port the OS hands out for `listen(0)` comes from the range the
// stack's own outgoing connections take their local ports from, and one of them could take it before the
// service listens on it (EADDRINUSE at start).
const LOW = 15_000;
const HIGH = 32_000;
/** Ports this process has handed out: a stack's listeners never get the same one twice. */
const handedOut = new Set<number>();

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free TCP port between ${LOW} and ${HIGH}`);
}

/** Free ports for every listener of a local stack, as the environment `npm start` reads. */
export async function stackPortsEnv(): Promise<Record<string, string>> {
  const names = ['PORT', 'WS_PORT', 'DYNAMODB_PORT', 'S3_PORT', 'SQS_PORT', 'ECHO_BOT_PORT'];
  const env: Record<string, string> = {};
  for (const name of names) env[name] = String(await freePort());
  return env;
}
