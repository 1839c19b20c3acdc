// The local HTTP gateway on the wire, as API Gateway frames it: replies carry a Content-Length (never chunked
// framing), a request with no body is served without waiting for one, and chunked or length-framed bodies
// are read whole, several requests in turn on one keep-alive connection.
import { connect, type Socket } from 'node:net';
import { apiUrl, userWithChat } from '../support/api';

interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw requests on one socket and reads each reply by its Content-Length (the framing under test). */
function rawClient(): { send(request: string): Promise<RawReply>; close(): void } {
  const url = new URL(apiUrl());
  const socket: Socket = connect(Number(url.port), url.hostname);
  let buffered = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    waiting?.();
  });
  const next = async (): Promise<RawReply> => {
    for (;;) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [start, ...lines] = buffered.toString('latin1', 0, end).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length']);
        if (Number.isInteger(length) && buffered.length >= end + 4 + length) {
          const body = buffered.toString('utf8', end + 4, end + 4 + length);
          buffered = buffered.subarray(end + 4 + length);
          return { status: Number(start.split(' ')[1]), headers, body };
        }
        if (headers['transfer-encoding']) throw new Error(`chunked reply: ${start}`);
      }
      await new Promise<void>((r) => (waiting = r));
    }
  };
  return {
    send: (request) => {
      socket.write(request);
      return next();
    },
    close: () => socket.destroy(),
  };
}

test('replies carry their Content-Length; GET without a body, chunked and length-framed POSTs on one connection', async () => {
  const { token, chatId } = await userWithChat();
  const host = new URL(apiUrl()).host;
  const client = rawClient();
  try {
    const list = await client.send(`GET /api/client/chats HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${token}\r\n\r\n`);
    expect(list.status).toBe(200);
    expect(list.headers['transfer-encoding']).toBeUndefined();
    expect(Number(list.headers['content-length'])).toBe(Buffer.byteLength(list.body));
    expect(JSON.parse(list.body)).toEqual([expect.objectContaining({ id: chatId })]);

    const content = 'héllo, chunked';
    const json = JSON.stringify({ content });
    const half = Math.floor(json.length / 2);
    const chunked = await client.send(
      `POST /api/client/chats/${chatId}/messages HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${token}\r\n` +
        `content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n` +
        `${Buffer.byteLength(json.slice(0, half)).toString(16)}\r\n${json.slice(0, half)}\r\n` +
        `${Buffer.byteLength(json.slice(half)).toString(16)}\r\n${json.slice(half)}\r\n0\r\n\r\n`,
    );
    expect(chunked.status).toBe(201);
    expect(JSON.parse(chunked.body)).toMatchObject({ content });

    const sized = JSON.stringify({ content: 'sized' });
    const second = await client.send(
      `POST /api/client/chats/${chatId}/messages HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${token}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(sized)}\r\n\r\n${sized}`,
    );
    expect(second.status).toBe(201);
    expect(Number(second.headers['content-length'])).toBe(Buffer.byteLength(second.body));

    // An error reply is framed the same way.
    const missing = await client.send(`GET /api/client/nope HTTP/1.1\r\nhost: ${host}\r\n\r\n`);
    expect(missing.status).toBe(404);
    expect(Number(missing.headers['content-length'])).toBe(Buffer.byteLength(missing.body));
    expect(JSON.parse(missing.body)).toEqual({ error: expect.any(String) });
  } finally {
    client.close();
  }
});
