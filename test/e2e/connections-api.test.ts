// The local @connections API (API Gateway's management API of the WebSocket gateway), spoken to on raw
// sockets as the SDK and the publisher speak it: keep-alive requests, every reply status, a request cut into
// single bytes, Expect: 100-continue; and the same answers on a connection that began as plain HTTP.
import { connect, type Socket } from 'node:net';
import { userWithChat } from '../support/api';
import { liveClient, until, type LiveClient } from '../support/realtime';
import { realtimeOf } from '../support/contract';

/** The test's own frames, read as it posted them. */
type Frame = Record<string, unknown>;
const clients: LiveClient<Frame>[] = [];
afterAll(() => clients.forEach((c) => c.close()));

const endpoint = () => new URL(process.env.WS_MANAGEMENT_ENDPOINT as string);

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One keep-alive connection: writes requests as given, reads replies one by one (by Content-Length). */
async function rawConnection() {
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(Number(endpoint().port), endpoint().hostname, () => resolve(s)).once('error', reject);
  });
  let text = '';
  let ended = false;
  socket.on('data', (d) => (text += d.toString('utf8')));
  socket.on('end', () => (ended = true));
  const next = async (): Promise<RawReply> => {
    await until(() => {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      return Buffer.byteLength(text.slice(end + 4)) >= length;
    }, 5000, 'a reply');
    const end = text.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    const body = Buffer.from(text.slice(end + 4)).subarray(0, length).toString();
    text = Buffer.from(text.slice(end + 4)).subarray(length).toString();
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  };
  const request = (method: string, path: string, body = '', extra = '') => {
    socket.write(`${method} ${path} HTTP/1.1\r\nhost: ${endpoint().host}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`);
    return next();
  };
  return { socket, next, request, ended: () => ended, close: () => socket.destroy() };
}

/** A subscribed client, its connection id, and a Centrifuge push frame for its channel. */
async function subscriber() {
  const { session } = await userWithChat();
  const rt = realtimeOf(session);
  // The frames below are the test's own, posted through the @connections API: not the service's publications.
  const c = await liveClient<Frame>(rt, {}, false);
  clients.push(c);
  const frame = (data: unknown) => JSON.stringify({ push: { channel: rt.channel, pub: { data } } });
  return { c, id: encodeURIComponent(c.clientId()), frame };
}

test('keep-alive: posts, a GET and errors on one connection, each answered as API Gateway answers', async () => {
  const { c, id, frame } = await subscriber();
  const conn = await rawConnection();
  expect(await conn.request('POST', `/@connections/${id}`, frame({ n: 1 }))).toMatchObject({ status: 200, body: '' });
  expect(await conn.request('POST', `/@connections/${id}`, frame({ n: 2, text: 'é' }))).toMatchObject({ status: 200 });
  await until(() => c.publications.length === 2, 5000, 'two publications');
  expect(c.publications).toEqual([{ n: 1 }, { n: 2, text: 'é' }]);

  const info = await conn.request('GET', `/@connections/${id}`);
  expect(info.status).toBe(200);
  expect(JSON.parse(info.body)).toEqual({ ConnectedAt: expect.any(String), LastActiveAt: expect.any(String), Identity: { SourceIp: '127.0.0.1', UserAgent: expect.any(String) } });

  const gone = await conn.request('POST', '/@connections/no-such-connection%3D', frame({}));
  expect(gone).toMatchObject({ status: 410, headers: { 'x-amzn-errortype': 'GoneException' } });
  expect(JSON.parse(gone.body)).toEqual({ message: 'Connection no-such-connection= is gone' });
  const tooLong = await conn.request('POST', `/@connections/${id}`, 'x'.repeat(128 * 1024 + 1));
  expect(tooLong).toMatchObject({ status: 413, headers: { 'x-amzn-errortype': 'PayloadTooLargeException' } });
  expect(await conn.request('GET', '/@connections/%E0%A4%A')).toMatchObject({ status: 400 });
  expect(await conn.request('GET', '/')).toMatchObject({ status: 426, body: 'WebSocket API: connect with a WebSocket client' });
  expect(c.publications).toHaveLength(2);

  // Still the same connection, still answering; DELETE closes the socket (the client then reconnects).
  const oldId = c.clientId();
  expect((await conn.request('DELETE', `/@connections/${id}`)).status).toBe(204);
  await until(() => c.clientId() !== oldId, 5000, 'a reconnect');
  expect(await conn.request('GET', `/@connections/${id}`)).toMatchObject({ status: 410 });
  expect(conn.ended()).toBe(false);
  conn.close();
});

test('a request cut into single bytes, and Expect: 100-continue, are read whole', async () => {
  const { c, id, frame } = await subscriber();
  const conn = await rawConnection();
  const body = frame({ bytes: true });
  const request = `POST /@connections/${id} HTTP/1.1\r\nhost: x\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  for (const ch of request) {
    conn.socket.write(ch);
    await new Promise((r) => setImmediate(r));
  }
  const reply = await conn.next();
  expect(reply.status).toBe(200);
  // Served by the gateway's own reader of @connections requests (node:http's replies carry a Date).
  expect(reply.headers.date).toBeUndefined();

  conn.socket.write(`POST /@connections/${id} HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: ${Buffer.byteLength(frame({ continued: true }))}\r\n\r\n`);
  expect((await conn.next()).status).toBe(100);
  conn.socket.write(frame({ continued: true }));
  expect((await conn.next()).status).toBe(200);
  await until(() => c.publications.length === 2, 5000, 'two publications');
  expect(c.publications).toEqual([{ bytes: true }, { continued: true }]);
  conn.close();
});

test('a chunked body gets 411 and the connection is closed; HTTP/1.0 gets its answer and a close', async () => {
  const { id } = await subscriber();
  const chunked = await rawConnection();
  chunked.socket.write(`POST /@connections/${id} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`);
  expect((await chunked.next()).status).toBe(411);
  await until(chunked.ended, 5000, 'the close');

  const old = await rawConnection();
  old.socket.write(`GET /@connections/${id} HTTP/1.0\r\n\r\n`);
  expect((await old.next()).status).toBe(200);
  await until(old.ended, 5000, 'the close');
});

test('a connection that began as plain HTTP (not the @connections API) gets the same answers', async () => {
  const { c, id, frame } = await subscriber();
  const conn = await rawConnection();
  expect(await conn.request('GET', '/')).toMatchObject({ status: 426 });
  expect(await conn.request('POST', `/@connections/${id}`, frame({ via: 'http' }))).toMatchObject({ status: 200 });
  expect(await conn.request('POST', '/@connections/gone%3D', frame({}))).toMatchObject({ status: 410, headers: { 'x-amzn-errortype': 'GoneException' } });
  await c.waitFor((d) => d.via === 'http');
  conn.close();
});
