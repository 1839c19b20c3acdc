// Free TCP ports for stacks started by tools and tests (asked from the OS, then released).
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Free ports for every listener of a local stack, as the environment `npm start` reads. */
export async function stackPortsEnv(): Promise<Record<string, string>> {
  const names = ['PORT', 'WS_PORT', 'DYNAMODB_PORT', 'S3_PORT', 'SQS_PORT', 'ECHO_BOT_PORT'];
  const env: Record<string, string> = {};
  for (const name of names) env[name] = String(await freePort());
  return env;
}
