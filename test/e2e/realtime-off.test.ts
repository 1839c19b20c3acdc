// REALTIME=off: no realtime block, no WebSocket gateway, and the whole HTTP flow still works (a reply counted).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processesOf, stackEnv, startLocalProcess } from '../support/local-process';
import { until } from '../support/realtime';
import { call } from '../support/http';
import type { Chat, Message, Session } from '../support/contract';
import type { DemoBot } from '../../lib/local/stack';

test('with realtime off the session has no realtime block and HTTP works end to end', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chat-rt-off-'));
  // The echo bot off: its answer to the user's message would race the history read below.
  const env = await stackEnv(dir, { REALTIME: 'off', ECHO_BOT: 'off' });
  const stack = await startLocalProcess(env);
  try {
    expect(stack.output()).toMatch(/realtime is off/);
    const { client_key } = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot;
    const post = <T>(path: string, json: unknown, token?: string) => call<T>('POST', `/api/client${path}`, { base: stack.apiUrl, json, token });
    const s = await post<Session>('/session', { client_key });
    expect(s.status).toBe(200);
    expect(s.body.realtime).toBeUndefined();
    expect(Object.keys(s.body).sort()).toEqual(['expires_at', 'session_token', 'user', 'widget']);
    const chat = await post<Chat>('/chats', { name: 'http only' }, s.body.session_token);
    const msg = await post<Message>(`/chats/${chat.body.id}/messages`, { content: 'hi' }, s.body.session_token);
    expect(msg.status).toBe(201);
    // The bot's reply counts for the user and moves the chat, as with realtime (the publisher only counts).
    const { secret_key } = JSON.parse(readFileSync(join(dir, 'demo-bot.json'), 'utf8')) as DemoBot;
    const reply = await call<Message>('POST', `/api/bot/chats/${chat.body.id}/messages`, { base: stack.apiUrl, headers: { authorization: `Bearer ${secret_key}` }, json: { content: 'hello, no socket' } });
    const replied = reply.body;
    expect(reply.status).toBe(201);
    const chats = async () => (await call<Chat[]>('GET', '/api/client/chats', { base: stack.apiUrl, token: s.body.session_token })).body;
    await until(async () => (await chats())[0].unread_msg_by_user === 1, 10_000, 'the reply to be counted');
    expect((await chats())[0]).toMatchObject({ unread_msg_by_user: 1, updated_at: replied.created_at });
    const read = await post(`/chats/${chat.body.id}/read`, {}, s.body.session_token);
    expect(read.body).toEqual({ status: 'ok' });
    expect((await chats())[0].unread_msg_by_user).toBe(0);
    const history = (await call<Message[]>('GET', `/api/client/chats/${chat.body.id}/messages`, { base: stack.apiUrl, token: s.body.session_token })).body;
    expect(history.map((m) => m.id)).toEqual([msg.body.id, replied.id]);
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  expect(await processesOf(dir)).toEqual([]); // nothing it started outlives it, DynamoDB Local's JVM included
}, 60_000);
