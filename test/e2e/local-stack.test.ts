// `npm start` itself: ready line, demo bot file, clear start-up errors, clean stop, data kept across restarts.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackEnv, startLocalProcess } from '../support/local-process';
import { call } from '../support/http';
import type { Chat, FileInfo, Message, Session } from '../support/contract';
import type { DemoBot } from '../../lib/local/stack';

const tmp = () => mkdtempSync(join(tmpdir(), 'chat-stack-'));
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
  });

/** The processes lib/local/stack.ts writes to local-stack.json, as far as these tests read them. */
const pidsIn = (dir: string) => JSON.parse(readFileSync(join(dir, 'local-stack.json'), 'utf8')) as { dynamodb: number };

/** A POST to another stack than the run's: `url` is whole (the contract's check still applies). */
async function post<T>(url: string, json: unknown, token?: string) {
  const { origin, pathname } = new URL(url);
  return call<T>('POST', pathname, { base: origin, json, token });
}

test('start, use, refuse a second start on the same ports, stop on SIGTERM, restart with all data kept', async () => {
  const dir = tmp();
  try {
    // npm start's default: the table in the data folder (test stacks keep theirs in memory).
    const env = await stackEnv(dir, { DYNAMODB_IN_MEMORY: 'off' });
    const first = await startLocalProcess(env);
    const demo = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot;
    expect(demo).toEqual({
      bot_id: expect.any(String),
      client_key: expect.stringMatching(/^cli_/),
      secret_key: expect.stringMatching(/^sk_/),
      webhook_secret: expect.stringMatching(/^whsec_/), // the echo bot answers the demo bot
    });
    expect(first.output()).toContain(demo.client_key);
    expect(first.output()).toContain(`http://localhost:${env.PORT}`);
    // DynamoDB Local's JVM got the options docs/configuration.md documents (C1 only, serial GC), or the caller's own.
    const { dynamodb } = pidsIn(dir);
    const javaEnv = readFileSync(`/proc/${dynamodb}/environ`, 'utf8').split('\0');
    expect(javaEnv).toContain(`JDK_JAVA_OPTIONS=${process.env.JDK_JAVA_OPTIONS || '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC'}`);
    expect(existsSync(join(dir, 'dynamodb', 'shared-local-instance.db'))).toBe(true);

    const api = `${first.apiUrl}/api/client`;
    const s = await post<Session>(`${api}/session`, { client_key: demo.client_key, external_id: 'keeper' });
    const chat = await post<Chat>(`${api}/chats`, { name: 'kept' }, s.body.session_token);
    const msg = await post<Message>(`${api}/chats/${chat.body.id}/messages`, { content: 'still here?' }, s.body.session_token);
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.from('file bytes')], { type: 'text/plain' }), 'note.txt');
    const file = await fetch(`${api}/files`, { method: 'POST', headers: { authorization: `Bearer ${s.body.session_token}` }, body: fd });
    expect(file.status).toBe(201);
    const fileId = ((await file.json()) as FileInfo).id;
    await post(`${api}/chats/${chat.body.id}/messages`, { content: '', content_type: 'document', files: [fileId] }, s.body.session_token);

    // A second stack on the same ports says which port is taken.
    await expect(startLocalProcess(env, undefined, 20_000)).rejects.toThrow(/Port \d+ \(PORT\) is already in use/);

    expect(await first.stop('SIGTERM')).toBe(0);
    expect(await portFree(Number(env.DYNAMODB_PORT))).toBe(true); // DynamoDB Local stopped with it

    const second = await startLocalProcess(env);
    try {
      expect(JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8'))).toEqual(demo);
      const again = await post<Session>(`${second.apiUrl}/api/client/session`, { client_key: demo.client_key, external_id: 'keeper' });
      expect(again.body.user.id).toBe(s.body.user.id);
      const res = await fetch(`${second.apiUrl}/api/client/chats/${chat.body.id}/messages`, {
        headers: { authorization: `Bearer ${again.body.session_token}` },
      });
      const history = (await res.json()) as Message[];
      expect(history.map((m) => m.id)).toContain(msg.body.id);
      const [file] = history.flatMap((m) => m.files ?? []);
      expect(await (await fetch(file.url)).text()).toBe('file bytes');
      // The old session token still verifies: the signing key is kept in the data folder.
      const old = await fetch(`${second.apiUrl}/api/client/chats`, { headers: { authorization: `Bearer ${s.body.session_token}` } });
      expect(old.status).toBe(200);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);

test('DYNAMODB_IN_MEMORY=on (the test run\'s stack): DynamoDB Local keeps the table in memory, no file in the data folder', () => {
  const dir = process.env.DATA_DIR as string;
  const { dynamodb } = pidsIn(dir);
  expect(readFileSync(`/proc/${dynamodb}/cmdline`, 'utf8').split('\0')).toContain('-inMemory');
  expect(existsSync(join(dir, 'dynamodb'))).toBe(false);
});

test('without Java it says so and how to install it, in one clear message', async () => {
  const dir = tmp();
  try {
    const env = await stackEnv(dir, { PATH: join(dir, 'empty-path') });
    const err = await startLocalProcess(env, undefined, 20_000).catch((e: Error) => e);
    const said = err instanceof Error ? String(err) : 'the stack started';
    expect(said).toMatch(/Java 17 or newer is needed/);
    expect(said).toMatch(/apt-get install -y openjdk-17-jre-headless/);
    expect(said).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(dir, 'demo-bot.json'))).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
