// What the local stack's parts share about processes: the error a part reports a failed start with (bin/local.ts
// prints its message alone, no stack trace), and how a child process (DynamoDB Local, the S3 emulator) is stopped.
import type { ChildProcess } from 'node:child_process';

/** A start-up failure the user can act on (a port in use, no Java): its message says what to do. */
export class LocalStackError extends Error {}

/** SIGTERM, then SIGKILL if the child is still running after `graceMs`. */
export function stopChild(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
