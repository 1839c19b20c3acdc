// The local stack listens on 127.0.0.1 only (HOST's default), and its S3 emulator refuses what S3 would: an
// unsigned or badly signed GET or PUT. Run against the run's shared stack.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { deleteObject, presignedGetUrl, putObject, objectHead } from '../../lambdas/aws/s3';
import { startDynamoLocal } from '../../lib/local/dynamodb';
import { freePort } from '../../lib/local/ports';
import { localSettings } from '../../lib/local/settings';

const env = process.env as Record<string, string>;
/** Every TCP port of the shared stack (its settings, lib/local/settings.ts). */
const PORTS = ['PORT', 'WS_PORT', 'SQS_PORT', 'ECHO_BOT_PORT', 'DYNAMODB_PORT', 'S3_PORT'].map((name) => ({ name, port: Number(env[name]) }));

/** This machine's addresses other than loopback (IPv6 link-local ones with their interface). */
function otherAddresses(): string[] {
  return Object.entries(networkInterfaces()).flatMap(([name, addrs]) =>
    (addrs ?? []).filter((a) => !a.internal).map((a) => (a.family === 'IPv6' && a.address.startsWith('fe80:') ? `${a.address}%${name}` : a.address)),
  );
}

/** How a TCP connection to host:port ends: 'connected', or the error's code (ECONNREFUSED: nothing listens). */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 5000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('timeout');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

/** The stack's process and all it started (DynamoDB Local's JVM, the S3 emulator, …), from /proc. */
function stackProcessTree(): number[] {
  const { stack } = JSON.parse(readFileSync(join(env.DATA_DIR, 'local-stack.json'), 'utf8')) as { stack: number };
  const parentOf = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      // The fields after the command's closing parenthesis: state, then the parent's pid.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parentOf.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const tree = [stack];
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parentOf) if (parent === tree[i]) tree.push(pid);
  return tree;
}

/** /proc/net/tcp's hex address (host byte order per 32-bit word, little-endian here) as text. */
function decodeAddress(hex: string): string {
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap((word) => (word.match(/../g) ?? []).reverse().map((b) => parseInt(b, 16)));
  if (bytes.length === 4) return bytes.join('.');
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) return `::ffff:${bytes.slice(12).join('.')}`;
  return Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] << 8) | bytes[2 * i + 1]).toString(16)).join(':');
}

/** The TCP sockets listening in these processes, as `address:port`. */
function listeningSockets(pids: number[]): string[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const m = /^socket:\[(\d+)\]$/.exec(linkOf(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      }
    } catch {
      /* gone */
    }
  }
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] !== '0A' || !inodes.has(f[9])) continue; // 0A: LISTEN
      const [addr, port] = f[1].split(':');
      found.push(`${decodeAddress(addr)}:${parseInt(port, 16)}`);
    }
  }
  return found;
}

function linkOf(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return ''; // closed meanwhile
  }
}

describe('what the local stack listens on', () => {
  test('every TCP socket the stack and its children listen on is on 127.0.0.1, one per service', () => {
    const sockets = listeningSockets(stackProcessTree());
    // The JVM maps 127.0.0.1 to ::ffff:127.0.0.1 on a dual-stack socket: the same address.
    expect(sockets.map((s) => s.replace(/^::ffff:/, '')).sort()).toEqual(PORTS.map(({ port }) => `127.0.0.1:${port}`).sort());
  });

  test("each service answers on 127.0.0.1 and on none of this machine's other addresses", async () => {
    const others = otherAddresses();
    if (others.length === 0) {
      // Nothing to try from: this proves nothing, so it says so rather than pass.
      throw new Error('this machine has no address but loopback (os.networkInterfaces()), so a listener on every interface cannot be told from one on 127.0.0.1; run this test on a machine with a network interface');
    }
    for (const { name, port } of PORTS) {
      expect(`${name} on 127.0.0.1: ${await tryConnect('127.0.0.1', port)}`).toBe(`${name} on 127.0.0.1: connected`);
      for (const host of others) expect(`${name} on ${host}: ${await tryConnect(host, port)}`).toBe(`${name} on ${host}: ECONNREFUSED`);
    }
  });

  test('DynamoDB Local answers a request on 127.0.0.1 and refuses the connection on another address', async () => {
    const others = otherAddresses();
    expect(others.length).toBeGreaterThan(0); // see the test above
    const client = (host: string) =>
      new DynamoDBClient({ endpoint: `http://${host.includes(':') ? `[${host}]` : host}:${env.DYNAMODB_PORT}`, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
    const local = client('127.0.0.1');
    expect((await local.send(new ListTablesCommand({}))).TableNames).toContain(env.TABLE_NAME);
    local.destroy();
    const remote = client(others.find((a) => !a.includes(':')) ?? others[0]);
    await expect(remote.send(new ListTablesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
    remote.destroy();
  });
});

describe('HOST, the setting that opens them', () => {
  test('DynamoDB Local listens where HOST says: 0.0.0.0 answers on every address', async () => {
    const other = otherAddresses().find((a) => !a.includes(':'));
    if (!other) throw new Error('this machine has no IPv4 address but loopback (os.networkInterfaces()): nothing to try from');
    const port = await freePort();
    const dynamo = await startDynamoLocal('0.0.0.0', port, null);
    try {
      expect(await tryConnect(other, port)).toBe('connected');
      expect(await tryConnect('127.0.0.1', port)).toBe('connected');
    } finally {
      await dynamo.stop();
    }
  });

  test('a HOST that is not 127.0.0.1, 0.0.0.0 or :: is refused, naming the values it takes', () => {
    const before = process.env.HOST;
    try {
      for (const host of ['192.0.2.2', 'localhost', 'example.test']) {
        process.env.HOST = host;
        expect(() => localSettings()).toThrow(`HOST must be 127.0.0.1 (this machine only), or 0.0.0.0 or :: (every interface), got "${host}"`);
      }
      process.env.HOST = '::';
      expect(localSettings().host).toBe('::');
    } finally {
      if (before === undefined) delete process.env.HOST;
      else process.env.HOST = before;
    }
  });
});

describe('the S3 emulator checks signatures as S3 does', () => {
  const key = `probe/local-listeners-${Date.now()}.txt`;
  const objectUrl = () => `${env.S3_ENDPOINT}/${env.BUCKET_NAME}/${key}`;
  const original = 'the checked bytes';
  /** The object's bytes, read with our own signed client (not the request under test). */
  const current = async () => (await objectHead(key, 1000))?.head.toString();
  const badlySigned = new S3Client({
    endpoint: env.S3_ENDPOINT,
    region: env.AWS_REGION,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: 'not-the-secret' },
    maxAttempts: 1,
  });
  const s3Error = async (res: Response) => ({ status: res.status, code: /<Code>([^<]*)<\/Code>/.exec(await res.text())?.[1] });

  beforeAll(() => putObject(key, Buffer.from(original), 'text/plain', 'inline'));
  afterAll(async () => {
    badlySigned.destroy();
    await deleteObject(key);
  });

  test('an unsigned GET, HEAD, PUT or DELETE is refused with 403 AccessDenied, and the object is unchanged', async () => {
    expect(await s3Error(await fetch(objectUrl()))).toEqual({ status: 403, code: 'AccessDenied' });
    expect((await fetch(objectUrl(), { method: 'HEAD' })).status).toBe(403);
    expect(await s3Error(await fetch(objectUrl(), { method: 'PUT', headers: { 'content-type': 'text/html' }, body: '<script>alert(1)</script>' }))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await s3Error(await fetch(objectUrl(), { method: 'DELETE' }))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(await current()).toBe(original);
  });

  test('a badly signed GET or PUT (Authorization header) is refused with 403 SignatureDoesNotMatch', async () => {
    await expect(badlySigned.send(new GetObjectCommand({ Bucket: env.BUCKET_NAME, Key: key }))).rejects.toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    await expect(badlySigned.send(new PutObjectCommand({ Bucket: env.BUCKET_NAME, Key: key, Body: 'replaced', ContentType: 'text/html' }))).rejects.toMatchObject({
      name: 'SignatureDoesNotMatch',
      $metadata: { httpStatusCode: 403 },
    });
    expect(await current()).toBe(original);
  });

  test('a presigned GET is served; one badly signed, or for another key, or a presigned PUT with the wrong key, is refused', async () => {
    const good = await presignedGetUrl(key, 60);
    const served = await fetch(good);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(original);

    const tampered = new URL(good);
    tampered.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect(await s3Error(await fetch(tampered))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    const otherKey = new URL(good);
    otherKey.pathname = otherKey.pathname.replace(/\.txt$/, '.html');
    expect(await s3Error(await fetch(otherKey))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });

    const put = await getSignedUrl(badlySigned, new PutObjectCommand({ Bucket: env.BUCKET_NAME, Key: key, ContentType: 'text/html' }), { expiresIn: 60 });
    expect(await s3Error(await fetch(put, { method: 'PUT', headers: { 'content-type': 'text/html' }, body: 'replaced' }))).toEqual({ status: 403, code: 'SignatureDoesNotMatch' });
    expect(await current()).toBe(original);
  });
});
