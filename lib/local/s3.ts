// The S3 emulator (@20minutes/s3rver), run as a child process of the local stack (like DynamoDB Local), so
// it can fail or be stopped on its own, as S3 can. The emulator listens on a port of its own behind
// lib/local/s3-post.ts, which checks a browser's POST upload as S3 does (the emulator checks no POST policy)
// and refuses unsigned requests (the emulator checks a signature only when there is one).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import S3rver from '@20minutes/s3rver';
import { LocalStackError, stopChild } from './process';
import type { S3Event } from 'aws-lambda';
import { startPostPolicyProxy } from './s3-post';

/** The bucket's CORS rules, as the stack's: pages read files and POST uploads from another origin. */
const CORS_XML = `<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod><AllowedMethod>HEAD</AllowedMethod><AllowedMethod>POST</AllowedMethod><AllowedHeader>*</AllowedHeader><MaxAgeSeconds>3600</MaxAgeSeconds></CORSRule></CORSConfiguration>`;

/** How the child hands an object event of the emulator to the stack: one line on its stdout. */
const EVENT_LINE = 's3 event ';

export interface LocalS3 {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Runs in the child: serve until killed. Each object event is journaled (journal.ts's format) before it is answered. */
async function serve(host: string, port: number, directory: string, bucket: string, journal: string): Promise<void> {
  mkdirSync(directory, { recursive: true });
  // run() would listen on TCP; its two steps, typed here (the package's types leave them out).
  const server = new S3rver({ directory, silent: true, configureBuckets: [{ name: bucket, configs: [CORS_XML] }] }) as unknown as {
    configureBuckets(): Promise<void>;
    listen(path: string): Promise<unknown>;
    on(name: 'event', listener: (event: S3Event) => void): void;
  };
  await server.configureBuckets();
  // The emulator emits the event before it answers the request: an acknowledged upload's event is on disk.
  server.on('event', (event) => {
    const id = randomUUID();
    appendFileSync(journal, JSON.stringify({ add: { id, value: event } }) + '\n');
    process.stdout.write(EVENT_LINE + JSON.stringify({ id, event }) + '\n');
  });
  // On a Unix socket in its folder: a TCP port taken here could be one the stack chose for another service.
  const socketPath = join(directory, 'emulator.sock');
  rmSync(socketPath, { force: true });
  await server.listen(socketPath);
  // The emulator's fixed key pair, which the functions sign with locally (lib/local/settings.ts).
  await startPostPolicyProxy({ host, port, target: { socketPath }, bucket, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  process.stdout.write('s3 ready\n');
}

/**
 * Starts the emulator; `onEvent` gets its object events (S3's event notifications), each with the id under which
 * the emulator journaled it in `journal` (lib/local/s3-events.ts marks it done).
 */
export async function startS3(
  root: string,
  host: string,
  port: number,
  directory: string,
  bucket: string,
  journal: string,
  onEvent: (id: string, event: S3Event) => void,
): Promise<LocalS3> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 's3.ts'), host, String(port), directory, bucket, journal], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let started = false;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // the caller has no handle on it to stop it with
      reject(new LocalStackError(`the S3 emulator did not start:\n${output}`));
    }, 20_000);
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      if (!started) {
        output += d.toString();
        started = output.includes('s3 ready');
        if (started) {
          clearTimeout(timer);
          resolve();
        }
        return;
      }
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith(EVENT_LINE)) continue;
        const { id, event } = JSON.parse(line.slice(EVENT_LINE.length)) as { id: string; event: S3Event };
        onEvent(id, event);
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      if (!started) output += d.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new LocalStackError(`the S3 emulator exited (${code}):\n${output}`));
    });
  });
  return { endpoint: `http://localhost:${port}`, process: child, stop: () => stopChild(child) };
}

if (require.main === module) {
  const [host, port, directory, bucket, journal] = process.argv.slice(2);
  serve(host, Number(port), directory, bucket, journal).catch((err) => {
    console.error(err);
    process.exit(1);
  });
  // The stack that started us is gone (killed outright): stop too, no orphan holding the port.
  const parent = process.ppid;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(0);
    }
  }, 1000).unref();
}
