// moto_server (an independent model of AWS, Python) on a free port, for the IAM tier. It starts open (no
// auth) so the test can create what the template describes and the IAM users; `enforceAuth()` then makes
// every later request need a valid SigV4 signature and an IAM policy allowing its action.
import { spawn, type ChildProcess } from 'node:child_process';
import { delimiter, join } from 'node:path';
import { freePort } from '../../lib/local/ports';

export interface Moto {
  endpoint: string;
  port: number;
  output: () => string;
  /** From now on every call is signature-checked and authorized against the caller's IAM policies. */
  enforceAuth(): Promise<void>;
  /** Back to open (set-up between flows). */
  openAuth(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMoto(timeoutMs = 30_000): Promise<Moto> {
  const port = await freePort();
  // Detached: moto and the shell guard are one process group, killed as a whole by stop(). The guard kills
  // moto when this process (the jest worker) is gone, however it ended (SIGKILL included).
  const guard = `moto_server -H 127.0.0.1 -p ${port} & m=$!; trap 'kill -9 $m 2>/dev/null' EXIT INT TERM; ` +
    `while kill -0 ${process.pid} 2>/dev/null && kill -0 $m 2>/dev/null; do sleep 0.5; done`;
  const child: ChildProcess = spawn('sh', ['-c', guard], {
    // A huge count: open until enforceAuth() sets it to 0 through /moto-api/reset-auth.
    // python/sitecustomize.py: moto's TransactWriteItems copies each table once, not once per item (same result).
    env: { ...process.env, INITIAL_NO_AUTH_ACTION_COUNT: '1000000000', MOTO_PORT: String(port), PYTHONPATH: [join(__dirname, 'python'), process.env.PYTHONPATH].filter(Boolean).join(delimiter) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killGroup = () => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {
      /* nothing left */
    }
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.ok) break;
    } catch {
      /* not up yet */
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      killGroup();
      throw new Error(`moto_server did not start on ${port}:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const resetAuth = async (count: string) => {
    const res = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'POST', body: count });
    if (!res.ok) throw new Error(`moto reset-auth: ${res.status} ${await res.text()}`);
  };
  return {
    endpoint,
    port,
    output: () => out,
    enforceAuth: () => resetAuth('0'),
    openAuth: () => resetAuth('1000000000'),
    stop: async () => {
      killGroup();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
      child.stdout?.destroy();
      child.stderr?.destroy();
    },
  };
}
