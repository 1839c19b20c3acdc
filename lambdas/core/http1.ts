// A small HTTP/1.1 client for the signed calls to AWS made without SDK clients (aws-http.ts): keep-alive
// sockets per origin, one request at a time on each, the request written in one go, the reply read by its
// Content-Length, chunked, or to the end of the connection. node:http's client costs about 20 µs more CPU per
// request than this one, and a fan-out posts once per socket (BENCHMARKS.md "Realtime").
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export interface HttpReply {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/** A keep-alive connection: its listeners stay for its whole life and hand its bytes to the request on it. */
interface Conn {
  socket: Socket;
  pool: Pool;
  /** The request whose reply is being read; none while idle. */
  current?: Exchange;
}

interface Exchange {
  reader: ReplyReader;
  resolve(reply: HttpReply): void;
  reject(err: Error): void;
}

/** Connections of one origin: idle ones to reuse, and requests waiting while all are busy. */
interface Pool {
  idle: Conn[];
  open: number;
  /** Each waiter is handed a connection, or undefined when a slot was freed for it to open one. */
  waiting: ((conn: Conn | undefined) => void)[];
}

/** Open sockets per origin at most, as node:http's agent was set to; further requests wait for one. */
export const MAX_SOCKETS_PER_ORIGIN = 64;

const pools = new Map<string, Pool>();

function poolOf(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) pools.set(origin, (pool = { idle: [], open: 0, waiting: [] }));
  return pool;
}

const CLOSED_EARLY = 'the connection closed before the whole reply';

function open(url: URL, pool: Pool): Promise<Conn> {
  const https = url.protocol === 'https:';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (https ? 443 : 80);
  return new Promise((resolve, reject) => {
    // SNI names a host, never an address (RFC 6066); the certificate is checked either way.
    const socket = https
      ? tlsConnect({ host, port, ...(!isIP(host) && { servername: host }), ALPNProtocols: ['http/1.1'] }, () => ready())
      : netConnect({ host, port }, () => ready());
    const conn: Conn = { socket, pool };
    let connected = false;
    const ready = () => {
      connected = true;
      socket.setNoDelay(true);
      resolve(conn);
    };
    socket.on('data', (chunk: Buffer) => {
      const ex = conn.current;
      if (!ex) return void socket.destroy(); // bytes nobody asked for
      let reply: HttpReply | undefined;
      try {
        reply = ex.reader.push(chunk);
      } catch (err) {
        return fail(conn, err as Error);
      }
      if (reply) finish(conn, reply, ex.reader.reusable);
    });
    socket.on('end', () => {
      const reply = conn.current?.reader.end();
      if (reply) finish(conn, reply, false);
    });
    socket.on('error', (err) => {
      if (!connected) reject(err);
      else if (conn.current) fail(conn, err);
    });
    // The one place a socket leaves the pool's count: a freed slot goes to a waiting request.
    socket.on('close', () => {
      if (conn.current) fail(conn, new Error(CLOSED_EARLY));
      const i = pool.idle.indexOf(conn);
      if (i >= 0) pool.idle.splice(i, 1);
      pool.open--;
      pool.waiting.shift()?.(undefined);
    });
  });
}

/** The pool's most recently released connection, if one is idle, taken for a request. */
function takeIdle(pool: Pool): Conn | undefined {
  const idle = pool.idle.pop();
  idle?.socket.ref();
  return idle;
}

/** A connection for the origin: an idle one, a new one while under the limit, or the next one given back. */
async function acquire(url: URL, pool: Pool): Promise<Conn> {
  for (;;) {
    const idle = takeIdle(pool);
    if (idle) return idle;
    if (pool.open < MAX_SOCKETS_PER_ORIGIN) {
      pool.open++;
      return open(url, pool); // its 'close' gives the slot back, also when connecting fails
    }
    const handed = await new Promise<Conn | undefined>((r) => pool.waiting.push(r));
    if (handed) return handed;
  }
}

/** Back to the pool (or to a waiting request) after a whole reply; closed when it cannot be reused. */
function release(conn: Conn, reusable: boolean): void {
  if (!reusable || conn.socket.destroyed) return void conn.socket.destroy();
  const waiter = conn.pool.waiting.shift();
  if (waiter) return waiter(conn);
  conn.socket.unref(); // an idle socket keeps no process alive
  conn.pool.idle.push(conn);
}

function finish(conn: Conn, reply: HttpReply, reusable: boolean): void {
  const ex = conn.current as Exchange;
  conn.current = undefined;
  release(conn, reusable);
  ex.resolve(reply);
}

function fail(conn: Conn, err: Error): void {
  const ex = conn.current as Exchange;
  conn.current = undefined;
  conn.socket.destroy();
  ex.reject(err);
}

/** Sends one request and reads its whole reply; rejects on network errors, and after `timeoutMs` in all. */
export function http1(method: string, url: URL, headers: Record<string, string>, body: Buffer | string | undefined, timeoutMs: number): Promise<HttpReply> {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\n`;
  for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
  if (body !== undefined) head += `content-length: ${Buffer.byteLength(body)}\r\n`;
  head += '\r\n';
  const pool = poolOf(url.origin);
  return new Promise((resolve, reject) => {
    let conn: Conn | undefined;
    let timedOut = false;
    // The whole exchange is bounded, the wait for a connection included.
    const timer = setTimeout(() => {
      timedOut = true;
      const err = Object.assign(new Error(`timed out after ${timeoutMs} ms`), { name: 'TimeoutError' });
      if (conn?.current) fail(conn, err);
      else reject(err);
    }, timeoutMs);
    const done = { resolve: (r: HttpReply) => (clearTimeout(timer), resolve(r)), reject: (e: Error) => (clearTimeout(timer), reject(e)) };
    const start = (got: Conn) => {
      // A connection that comes after the time is up goes back to the pool unused.
      if (timedOut) return release(got, true);
      conn = got;
      got.current = { reader: new ReplyReader(method), ...done };
      if (typeof body === 'string') got.socket.write(head + body, 'utf8');
      else if (body) {
        // One buffer, one write (a corked pair of writes goes out as a costlier writev).
        const bytes = Buffer.allocUnsafe(head.length + body.length);
        bytes.write(head, 0, 'latin1');
        body.copy(bytes, head.length);
        got.socket.write(bytes);
      } else got.socket.write(head, 'latin1');
    };
    // An idle keep-alive connection is used at once (a fan-out's posts go out as they are made); otherwise one
    // is opened or waited for.
    const idle = takeIdle(pool);
    if (idle) start(idle);
    else acquire(url, pool).then(start, (err: Error) => done.reject(err));
  });
}

/** An HTTP/1.x message head (`end`: where its blank line starts): the start line, and headers by lower-case name. */
export function parseHead(bytes: Buffer, end: number): { start: string; headers: Map<string, string> } {
  const [start, ...lines] = bytes.toString('latin1', 0, end).split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { start, headers };
}

const EMPTY = Buffer.alloc(0);

/** Reads one reply from the bytes as they arrive. */
class ReplyReader {
  private buffered: Buffer = EMPTY;
  private status = 0;
  private headers = new Map<string, string>();
  private headDone = false;
  /** Bytes of body still to come; -1: chunked; -2: up to the end of the connection. */
  private remaining = 0;
  private chunks: Buffer[] = [];
  reusable = true;

  constructor(private readonly method: string) {}

  push(chunk: Buffer): HttpReply | undefined {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    if (!this.headDone) {
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end < 0) {
        if (this.buffered.length > 64 * 1024) throw new Error('reply head too large');
        return undefined;
      }
      const head = parseHead(this.buffered, end);
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(head.start);
      if (!m) throw new Error(`not an HTTP/1.1 reply: ${head.start.slice(0, 40)}`);
      this.status = Number(m[1]);
      this.headers = head.headers;
      this.buffered = this.buffered.subarray(end + 4);
      this.headDone = true;
      // An interim 100 Continue is followed by the real reply.
      if (this.status === 100) return this.restart();
      if (/close/i.test(this.headers.get('connection') ?? '') || head.start.startsWith('HTTP/1.0')) this.reusable = false;
      const length = this.headers.get('content-length');
      if (this.method === 'HEAD' || this.status === 204 || this.status === 304) this.remaining = 0;
      else if (/chunked/i.test(this.headers.get('transfer-encoding') ?? '')) this.remaining = -1;
      else if (length !== undefined) {
        this.remaining = Number(length);
        if (!Number.isSafeInteger(this.remaining) || this.remaining < 0) throw new Error(`bad content-length ${length}`);
      } else {
        this.remaining = -2;
        this.reusable = false;
      }
    }
    return this.body();
  }

  /** The connection ended: a reply read to its end is whole; any other is cut short. */
  end(): HttpReply | undefined {
    if (this.headDone && this.remaining === -2) return this.reply(Buffer.concat([...this.chunks, this.buffered]));
    return undefined;
  }

  private restart(): HttpReply | undefined {
    const rest = this.buffered;
    this.buffered = EMPTY;
    this.headDone = false;
    this.headers = new Map();
    return rest.length ? this.push(rest) : undefined;
  }

  private body(): HttpReply | undefined {
    if (this.remaining >= 0) {
      if (this.buffered.length < this.remaining) return undefined;
      if (this.buffered.length > this.remaining) this.reusable = false; // bytes nobody asked for
      return this.reply(this.buffered.subarray(0, this.remaining));
    }
    if (this.remaining === -2) {
      this.chunks.push(this.buffered);
      this.buffered = EMPTY;
      return undefined;
    }
    // Chunked: size line, data, CRLF; a zero size, optional trailers, and an empty line end it.
    for (;;) {
      const eol = this.buffered.indexOf('\r\n');
      if (eol < 0) return undefined;
      const size = parseInt(this.buffered.toString('latin1', 0, eol).split(';')[0].trim(), 16);
      if (!Number.isSafeInteger(size) || size < 0) throw new Error('bad chunk size');
      if (size === 0) {
        // Optional trailers, then an empty line.
        const end = this.buffered.indexOf('\r\n\r\n', eol);
        if (end < 0) return undefined;
        if (this.buffered.length > end + 4) this.reusable = false;
        return this.reply(Buffer.concat(this.chunks));
      }
      if (this.buffered.length < eol + 2 + size + 2) return undefined;
      this.chunks.push(this.buffered.subarray(eol + 2, eol + 2 + size));
      this.buffered = this.buffered.subarray(eol + 2 + size + 2);
    }
  }

  private reply(body: Buffer): HttpReply {
    return { status: this.status, headers: this.headers, body };
  }
}
