// No process outlives the tests: a stack's start that times out, the stack killed outright, and the test
// process that started it killed outright each leave nothing running (not the JVM of DynamoDB Local, not the
// S3 emulator, not the stack).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesOf, ROOT, stackEnv, startLocalProcess } from '../support/local-process';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'chat-orphans-'))));
afterEach(async () => {
  // Should a test fail, take what it left with it rather than leave it to the next run.
  for (const line of await processesOf(dir)) process.kill(Number(line.split(' ')[0]), 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const javaOf = async (d: string) => (await processesOf(d)).find((line) => / DynamoDBLocalOnHost /.test(line));

test('a start that times out (DynamoDB Local hanging) stops the stack and everything it started', async () => {
  const env = await stackEnv(dir, { REALTIME: 'off' });
  const starting = startLocalProcess(env, undefined, 8_000).catch((e: Error) => e);
  // Freeze the JVM as soon as it exists: the stack then waits on it until the start times out.
  let java: string | undefined;
  while (!(java = await javaOf(dir))) await new Promise((r) => setTimeout(r, 20));
  process.kill(Number(java.split(' ')[0]), 'SIGSTOP');
  const failed = await starting;
  expect(failed instanceof Error ? failed.message : 'the stack started').toMatch(/local stack not ready in 8000 ms/);
  expect(await processesOf(dir, 5_000)).toEqual([]);
}, 60_000);

test('the stack killed with SIGKILL leaves neither DynamoDB Local nor the S3 emulator running', async () => {
  const stack = await startLocalProcess(await stackEnv(dir, { REALTIME: 'off' }));
  try {
    const pids = JSON.parse(readFileSync(join(dir, 'local-stack.json'), 'utf8')) as { stack: number; dynamodb: number };
    expect(await javaOf(dir)).toMatch(new RegExp(`^${pids.dynamodb} `));
    process.kill(pids.stack, 'SIGKILL');
    // Nothing but the stack is killed here, and no stop() is called before the check: they go by themselves.
    expect(await processesOf(dir, 5_000)).toEqual([]);
  } finally {
    await stack.stop();
  }
}, 60_000);

test('the process that started the stack killed with SIGKILL: the stack stops, and all it started', async () => {
  const env = await stackEnv(dir, { REALTIME: 'off' });
  // A stand-in for a test worker torn down mid-test: it starts a stack and is then killed outright.
  const launcher = spawn(
    process.execPath,
    ['--import', 'tsx', '-e', `require('./test/support/local-process').startLocalProcess(${JSON.stringify(env)}).then(() => console.log('started'))`],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((r) => launcher.once('exit', r));
  await new Promise<void>((resolve, reject) => {
    launcher.stdout.on('data', (d: Buffer) => d.toString().includes('started') && resolve());
    void exited.then(() => reject(new Error('the launcher exited before the stack was ready')));
  });
  expect(await javaOf(dir)).toBeDefined();
  launcher.kill('SIGKILL');
  await exited;
  expect(await processesOf(dir, 10_000)).toEqual([]);
}, 60_000);
