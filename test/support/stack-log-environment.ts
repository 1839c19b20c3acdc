// Jest environment for the suites that share the run's local stack: a passing test prints nothing; a failing
// one prints the stack's log lines written while it ran (test-output/local-stack.log holds them all).
import { openSync, readSync, closeSync, statSync } from 'node:fs';
import NodeEnvironment from 'jest-environment-node';

const logFile = (): string | undefined => process.env.LOCAL_STACK_LOG;

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The bytes of `file` from `start` to its current end, as text. */
function tail(file: string, start: number): string {
  const end = sizeOf(file);
  if (end <= start) return '';
  const buf = Buffer.alloc(end - start);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buf, 0, buf.length, start);
  } finally {
    closeSync(fd);
  }
  return buf.toString('utf8');
}

export default class StackLogEnvironment extends NodeEnvironment {
  private started = 0;

  async handleTestEvent(event: { name: string; test?: { name: string; errors: unknown[] } }): Promise<void> {
    const file = logFile();
    if (!file) return;
    if (event.name === 'test_start') this.started = sizeOf(file);
    if (event.name === 'test_done' && event.test && event.test.errors.length > 0) {
      const lines = tail(file, this.started).trimEnd();
      // Other tests share the stack: these are the lines of the failed test's time, theirs included.
      if (lines) process.stderr.write(`\n── local stack log while "${event.test.name}" ran ──\n${lines}\n── end of log ──\n`);
    }
  }
}
