// Jest environment for the main suite: a passing test prints nothing; a failing one prints the JSON log lines
// written while it ran, those of handlers run in the test's own process and the shared local stack's
// (test-output/local-stack.log holds all of the stack's).
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

type Write = typeof process.stdout.write;

export default class StackLogEnvironment extends NodeEnvironment {
  private started = 0;
  /** Log lines of handlers run in this process (Powertools' JSON), held until the test's outcome is known. */
  private held: string[] = [];
  private restore: (() => void)[] = [];

  async setup(): Promise<void> {
    await super.setup();
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
      stream.write = (chunk: unknown, ...rest: unknown[]) => {
        if (String(chunk).startsWith('{"level"')) {
          this.held.push(String(chunk).trimEnd());
          return true;
        }
        return write(chunk, ...rest);
      };
      this.restore.push(() => (stream.write = write as Write));
    }
  }

  async teardown(): Promise<void> {
    for (const undo of this.restore) undo();
    await super.teardown();
  }

  handleTestEvent(event: { name: string; test?: { name: string; errors: unknown[] } }): void {
    const file = logFile();
    if (event.name === 'test_start') {
      this.held = [];
      if (file) this.started = sizeOf(file);
    }
    if (event.name === 'test_done' && event.test && event.test.errors.length > 0) {
      const own = this.held.join('\n');
      // Other tests share the stack: these are the lines of the failed test's time, theirs included.
      const stack = file ? tail(file, this.started).trimEnd() : '';
      const print = (title: string, lines: string) =>
        lines && process.stderr.write(`\n── ${title} while "${event.test!.name}" ran ──\n${lines}\n── end of log ──\n`);
      print('log lines of this process', own);
      print('local stack log', stack);
    }
  }
}
