// The HTTP/1.1 client of the signed AWS calls (lambdas/core/http1.ts), against real servers on loopback: a
// node:http server, raw TCP servers that answer in the ways HTTP allows (chunked, cut into bytes, to the end
// of the connection, 100 Continue, Connection: close), a server that never answers, and TLS with a
// certificate that must be checked (test/support/tls: a self-signed certificate for localhost, made for
// these tests only).
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { http1, MAX_SOCKETS_PER_ORIGIN } from '../../lambdas/core/http1';
import { ROOT } from '../support/local-process';

const servers: (Server | NetServer)[] = [];
const serverSockets = new Set<Socket>();
afterAll(async () => {
  // The client keeps idle connections open, as it should; the servers drop theirs to close.
  for (const socket of serverSockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function listen<S extends Server | NetServer>(server: S): Promise<{ server: S; url: URL; connections: () => number }> {
  let connections = 0;
  server.on('connection', (socket: Socket) => {
    connections++;
    serverSockets.add(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const port = (server.address() as AddressInfo).port;
  return { server, url: new URL(`http://127.0.0.1:${port}/prod/@connections/abc%3D`), connections: () => connections };
}

/** A raw TCP server answering every request with `reply(socket, requestText)` once the request has arrived. */
function rawServer(reply: (socket: Socket, request: string) => void) {
  return listen(
    createNetServer((socket) => {
      let text = '';
      socket.on('data', (d) => {
        text += d.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? 0);
        if (end >= 0 && text.length >= end + 4 + length) {
          const request = text;
          text = '';
          reply(socket, request);
        }
      });
      socket.on('error', () => undefined);
    }),
  );
}

test('a POST arrives with its method, path, headers and body, and keep-alive reuses one connection', async () => {
  const arrived: { method?: string; url?: string; headers: Record<string, unknown>; body: string }[] = [];
  const { url, connections } = await listen(
    createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        arrived.push({ method: req.method, url: req.url, headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n: arrived.length }));
      });
    }),
  );
  for (const body of ['{"push":1}', Buffer.from('{"push":2} é')]) {
    const r = await http1('POST', url, { host: url.host, 'x-amz-date': '20261121T100000Z' }, body, 2000);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(r.body.toString())).toEqual({ n: arrived.length });
  }
  expect(arrived.map((a) => [a.method, a.url, a.body, a.headers['x-amz-date'], a.headers['content-length']])).toEqual([
    ['POST', '/prod/@connections/abc%3D', '{"push":1}', '20261121T100000Z', '10'],
    ['POST', '/prod/@connections/abc%3D', '{"push":2} é', '20261121T100000Z', String(Buffer.byteLength('{"push":2} é'))],
  ]);
  expect(connections()).toBe(1);
  const get = await http1('GET', new URL(`${url.origin}/x?y=1`), { host: url.host }, undefined, 2000);
  expect(get.status).toBe(200);
  expect(arrived.at(-1)).toMatchObject({ method: 'GET', url: '/x?y=1', body: '' });
  expect(arrived.at(-1)!.headers['content-length']).toBeUndefined();
});

test('replies read whole however they come: chunked with trailers, cut into single bytes, to the end of the connection, after 100 Continue', async () => {
  const slowly = async (socket: Socket, text: string) => {
    for (const ch of text) {
      socket.write(ch);
      await new Promise((r) => setImmediate(r));
    }
  };
  const cases: [string, (socket: Socket) => void | Promise<void>, number, string][] = [
    ['chunked', (s) => void s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n'), 200, 'hello world'],
    ['bytes', (s) => slowly(s, 'HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"message":"no"}\n'), 410, '{"message":"no"}\n'],
    ['chunked bytes', (s) => slowly(s, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n'), 200, 'abc'],
    ['to the end', (s) => void s.end('HTTP/1.1 500 Internal\r\nConnection: close\r\n\r\nsome text until close'), 500, 'some text until close'],
    ['100 Continue', (s) => void s.write('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok'), 201, 'ok'],
    ['204', (s) => void s.write('HTTP/1.1 204 No Content\r\n\r\n'), 204, ''],
  ];
  for (const [name, answer, status, body] of cases) {
    const { url } = await rawServer((socket) => void answer(socket));
    const r = await http1('POST', url, { host: url.host }, 'x', 2000);
    expect([name, r.status, r.body.toString()]).toEqual([name, status, body]);
  }
});

test('a reply with Connection: close, or a keep-alive socket the server closed, is not reused: the next request connects anew', async () => {
  const { url, connections } = await rawServer((socket) => void socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
  await http1('POST', url, { host: url.host }, 'a', 2000);
  await http1('POST', url, { host: url.host }, 'b', 2000);
  expect(connections()).toBe(2);

  let open: Socket[] = [];
  const idle = await rawServer((socket) => {
    open.push(socket);
    socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
  });
  expect((await http1('POST', idle.url, { host: idle.url.host }, 'a', 2000)).body.toString()).toBe('ok');
  // The server drops the idle connection, as servers do after their keep-alive timeout.
  for (const s of open) s.destroy();
  open = [];
  await new Promise((r) => setTimeout(r, 50));
  expect((await http1('POST', idle.url, { host: idle.url.host }, 'b', 2000)).body.toString()).toBe('ok');
  expect(idle.connections()).toBe(2);
});

test('no answer → a TimeoutError after the time given; a refused connection or a malformed reply → an error', async () => {
  const { url } = await rawServer(() => undefined);
  const started = Date.now();
  const err = await http1('POST', url, { host: url.host }, 'x', 300).catch((e) => e);
  expect(err.name).toBe('TimeoutError');
  expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  expect(Date.now() - started).toBeLessThan(2000);

  const closed = await listen(createNetServer());
  const port = closed.url.port;
  await new Promise((r) => closed.server.close(r));
  servers.splice(servers.indexOf(closed.server), 1);
  await expect(http1('POST', new URL(`http://127.0.0.1:${port}/`), {}, 'x', 2000)).rejects.toThrow(/ECONNREFUSED/);

  const bad = await rawServer((socket) => void socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
  await expect(http1('POST', bad.url, { host: bad.url.host }, 'x', 2000)).rejects.toThrow(/not an HTTP\/1.1 reply/);
  const cut = await rawServer((socket) => void socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort'));
  await expect(http1('POST', cut.url, { host: cut.url.host }, 'x', 2000)).rejects.toThrow(/closed before the whole reply/);
});

test(`at most ${MAX_SOCKETS_PER_ORIGIN} connections per origin: more requests at once wait for a free one, and all are answered`, async () => {
  let inFlight = 0;
  let most = 0;
  // Replies are held until the limit's worth of requests is in: a busy machine cannot let an early reply
  // free a connection before the last one opens (a client that opened fewer would never be answered).
  const held: (() => void)[] = [];
  const { url, connections } = await listen(
    createServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      req.resume();
      const answer = () => {
        inFlight--;
        res.end(req.url);
      };
      if (most < MAX_SOCKETS_PER_ORIGIN) held.push(answer);
      else {
        held.splice(0).forEach((a) => a());
        answer();
      }
    }),
  );
  const n = MAX_SOCKETS_PER_ORIGIN + 36;
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => http1('POST', new URL(`${url.origin}/${i}`), { host: url.host }, 'x', 5000)));
  expect(replies.map((r) => r.body.toString())).toEqual(Array.from({ length: n }, (_, i) => `/${i}`));
  expect(most).toBe(MAX_SOCKETS_PER_ORIGIN);
  expect(connections()).toBe(MAX_SOCKETS_PER_ORIGIN);
});

test('a request that waits for a free connection past its time fails alone, and no connection is lost to it', async () => {
  const { url, connections } = await listen(
    createServer((req, res) => {
      req.resume();
      setTimeout(() => res.end('late'), 300);
    }),
  );
  const busy = Array.from({ length: MAX_SOCKETS_PER_ORIGIN }, () => http1('POST', url, { host: url.host }, 'x', 5000));
  const waiting = await http1('POST', url, { host: url.host }, 'x', 100).catch((e) => e);
  expect(waiting.name).toBe('TimeoutError');
  expect((await Promise.all(busy)).every((r) => r.body.toString() === 'late')).toBe(true);
  // All of them again at once: none was lost to the request that gave up.
  const again = await Promise.all(Array.from({ length: MAX_SOCKETS_PER_ORIGIN }, () => http1('POST', url, { host: url.host }, 'x', 2000)));
  expect(again.every((r) => r.body.toString() === 'late')).toBe(true);
  expect(connections()).toBe(MAX_SOCKETS_PER_ORIGIN);
});

describe('HTTPS', () => {
  const tlsDir = join(ROOT, 'test', 'support', 'tls');
  let url: URL;
  beforeAll(async () => {
    const server = createTlsServer({ key: readFileSync(join(tlsDir, 'key.pem')), cert: readFileSync(join(tlsDir, 'cert.pem')) }, (req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => res.end(`${(req.socket as TLSSocket).alpnProtocol || 'no-alpn'} ${body}`));
    });
    await listen(server);
    url = new URL(`https://localhost:${(server.address() as AddressInfo).port}/prod/@connections/x`);
  });

  /** The request made by a fresh Node process, which trusts the test certificate only when told to. */
  const requestFromChild = (env: Record<string, string>) =>
    new Promise<{ replies?: { status: number; body: string }[]; error?: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'test', 'support', 'tls-request.ts'), url.href], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('error', reject);
      child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').pop() ?? '{}')));
    });

  test('the certificate is checked: an untrusted one is refused, a trusted one carries the requests', async () => {
    const refused = await requestFromChild({ NODE_EXTRA_CA_CERTS: '' });
    expect(refused.error).toMatch(/self[- ]signed|unable to verify|certificate/i);
    const trusted = await requestFromChild({ NODE_EXTRA_CA_CERTS: join(tlsDir, 'cert.pem') });
    expect(trusted).toEqual({ replies: [{ status: 200, body: 'http/1.1 one' }, { status: 200, body: 'http/1.1 two' }] });
  });
});
