// Realtime limits: oversized frames are refused without work, frames past API Gateway's 128 KB close the
// socket with 1009 (the client does not reconnect blindly), and the largest message the API accepts still
// fits in one publication.
import WebSocket from 'ws';
import { call, userWithChat } from '../support/api';
import { liveClient } from '../support/realtime';

test('a frame over 16 KB gets a bad-request error and nothing else; over 128 KB the socket closes with 1009', async () => {
  const { session } = await userWithChat();
  const rt = (session as any).realtime;
  const ws = new WebSocket(rt.url);
  await new Promise((r) => ws.once('open', r));
  const reply = new Promise<string>((r) => ws.once('message', (d) => r(d.toString())));
  ws.send(JSON.stringify({ id: 1, connect: { token: rt.token, pad: 'x'.repeat(17 * 1024) } }));
  expect(JSON.parse(await reply)).toEqual({ error: { code: 107, message: expect.stringMatching(/at most 16384 bytes/) } });
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  ws.send('x'.repeat(129 * 1024));
  expect(await closed).toBe(1009);
});

test('the largest message the API accepts still fits in one publication (API Gateway: 128 KB)', async () => {
  const { session, token, chatId } = await userWithChat();
  const live = await liveClient((session as any).realtime);
  try {
    // Worst case for JSON size: control characters escape to six bytes each; ten long links.
    const content = '\u0001'.repeat(10_000);
    const complete_files = Array.from({ length: 10 }, (_, i) => ({ url: `https://cdn.example/${String(i).padEnd(2000, '\u00e9')}`, type: 'document' }));
    const sent = await call('POST', `/api/client/chats/${chatId}/messages`, { token, json: { content, complete_files } });
    expect(sent.status).toBe(201);
    const pub = await live.waitFor((d) => d.data?.id === sent.body.id);
    expect(pub.data.content).toBe(content);
    expect(Buffer.byteLength(JSON.stringify(pub))).toBeLessThan(128 * 1024);
  } finally {
    live.close();
  }
});
