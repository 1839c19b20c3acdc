// Runs `npm start`'s entry (bin/local.ts) as a child process, the way a user runs it, and waits for "ready".
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync } from 'node:fs';
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

/**
 * A test stack's environment: its data folder, free ports, and its table in memory (DynamoDB Local answers with
 * about a third less CPU than from its file); a test that restarts a stack and reads its data again passes
 * DYNAMODB_IN_MEMORY: 'off'. Its stream is read every 25 ms while busy, not every 10: a stack kept busy spends
 * about a quarter of a core on 10 ms reads (DynamoDB Local's and its own); over a whole suite, whose stacks are
 * not always busy, that came to about 16 s of CPU in 1,000.
 */
export async function stackEnv(dataDir: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { DATA_DIR: dataDir, ...(await stackPortsEnv()), DYNAMODB_IN_MEMORY: 'on', LOCAL_STREAM_POLL_MS: '25', ...extra };
}

export async function startLocalProcess(env: Record<string, string>, logFile?: string, timeoutMs = 60_000): Promise<LocalProcess> {
  // Node with tsx's loader, as `tsx` runs it, but not under the `tsx` CLI: that one SIGKILLs a child that has
  // not answered a relayed SIGTERM within 30 ms, and sits between the stack and us, its parent, whose death it
  // watches. Detached: the stack and all it starts (DynamoDB Local, the S3 emulator) are one process group,
  // which stop() ends as a whole, whatever state the stack is in.
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'local.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    const log = createWriteStream(logFile);
    child.stdout.pipe(log);
    child.stderr.pipe(log);
  }
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`local stack not ready in ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const check = () => {
      if (/ready on /.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`local stack exited with ${code} before ready:\n${out}`));
    });
  }).catch(async (err) => {
    killGroup(child);
    await exited;
    throw err;
  });
  return {
    child,
    env,
    output: () => out,
    apiUrl: `http://localhost:${env.PORT}`,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      // A stack that does not stop in time, or that ended without stopping what it started: end them all.
      const timer = setTimeout(() => killGroup(child), 20_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        killGroup(child);
      }
    },
  };
}

/** SIGKILL to the stack's whole process group: itself and all it started, even when it has already exited. */
function killGroup(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    /* nothing left */
  }
}

/**
 * The running processes (pid and command line) with DATA_DIR=dataDir in their environment: the stack run on
 * that folder and all it started (the JVM of DynamoDB Local and the S3 emulator inherit it). Waits up to
 * `waitMs` for them to go, as a parent-death guard takes a moment.
 */
export async function processesOf(dataDir: string, waitMs = 0): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const found: string[] = [];
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`DATA_DIR=${dataDir}`)) continue;
        found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()}`);
      } catch {
        /* gone, or not ours */
      }
    }
    if (found.length === 0 || Date.now() >= deadline) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A file's own stack, and this process's lambdas/ modules (imported after this) pointed at its table, queues and
 * settings instead of the run's shared stack.
 */
export async function startOwnStack(env: Record<string, string>): Promise<LocalProcess> {
  const stack = await startLocalProcess(env);
  Object.assign(process.env, env);
  const { applyLocalEnv, localSettings } = await import('../../lib/local/settings');
  applyLocalEnv(localSettings());
  return stack;
}
