// Runs `npm start`'s entry (bin/local.ts) as a child process, the way a user runs it, and waits for "ready".
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stackPortsEnv } from '../../lib/local/ports';

export const ROOT = join(__dirname, '..', '..');

export interface LocalProcess {
  child: ChildProcess;
  output: () => string;
  env: Record<string, string>;
  apiUrl: string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function stackEnv(dataDir: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { DATA_DIR: dataDir, ...(await stackPortsEnv()), ...extra };
}

export async function startLocalProcess(env: Record<string, string>, logFile?: string, timeoutMs = 60_000): Promise<LocalProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bin', 'local.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    const log = createWriteStream(logFile);
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
  }
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`local stack not ready in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      if (/ready on /.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`local stack exited with ${code} before ready:\n${out}`));
    });
  }).catch(async (err) => {
    child.kill('SIGKILL');
    throw err;
  });
  return {
    child,
    env,
    output: () => out,
    apiUrl: `http://localhost:${env.PORT}`,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
