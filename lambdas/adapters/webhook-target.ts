// Where a webhook may go: an https URL whose host is, and resolves to, a public address. Checked when the URL is
// set (checkWebhookUrl) and again at every delivery (postWebhook), against the address actually connected to.
import { BlockList, isIP, type Socket } from 'node:net';
import { lookup as dnsLookup, promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { InvalidInputError } from '../shared/errors';

/** The rule, as every refusal names it (docs/bot-api.md "Webhook addresses"). */
export const WEBHOOK_ADDRESS_RULE = 'a webhook URL must be https: and reach only public addresses';

/** Special-purpose ranges (IANA's registries): never a bot's server, often the cloud's own services. */
const RANGES: [label: string, family: 'ipv4' | 'ipv6', net: string, bits: number][] = [
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['carrier-grade NAT', 'ipv4', '100.64.0.0', 10],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['link-local (cloud metadata)', 'ipv4', '169.254.0.0', 16],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['documentation', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '192.88.99.0', 24],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['reserved', 'ipv4', '198.18.0.0', 15],
  ['documentation', 'ipv4', '198.51.100.0', 24],
  ['documentation', 'ipv4', '203.0.113.0', 24],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4], // 255.255.255.255 (broadcast) included
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['reserved', 'ipv6', '::', 96], // IPv4-compatible (deprecated)
  ['reserved', 'ipv6', '64:ff9b:1::', 48], // local-use NAT64
  ['reserved', 'ipv6', '100::', 64], // discard-only
  ['reserved', 'ipv6', '2001::', 23], // IETF protocol assignments, Teredo included
  ['documentation', 'ipv6', '2001:db8::', 32],
  ['reserved', 'ipv6', '2002::', 16], // 6to4: reaches IPv4 addresses through relays
  ['unique-local', 'ipv6', 'fc00::', 7], // fd00:ec2::254 (EC2's metadata over IPv6) included
  ['link-local', 'ipv6', 'fe80::', 10],
  ['site-local', 'ipv6', 'fec0::', 10],
  ['multicast', 'ipv6', 'ff00::', 8],
];

const lists = new Map<string, BlockList>();
for (const [label, family, net, bits] of RANGES) {
  if (!lists.has(label)) lists.set(label, new BlockList());
  lists.get(label)!.addSubnet(net, bits, family);
}

/** An IPv6 address's eight groups as numbers (a trailing dotted quad included). */
function ipv6Groups(address: string): number[] {
  let a = address.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (quad) {
    const [b0, b1, b2, b3] = quad.slice(1).map(Number);
    a = a.slice(0, quad.index) + `${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split('::');
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  return tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t];
}

/** The IPv4 address an IPv6 one carries when it is IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d). */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (!mapped && !nat64) return undefined;
  return [g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255].join('.');
}

/** What kind of special address this is (e.g. "loopback", "private"), or undefined for a public one. */
export function specialAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const v4 = family === 6 ? embeddedIpv4(address) : address;
  for (const [label, list] of lists) {
    if (v4 ? list.check(v4, 'ipv4') : list.check(address, 'ipv6')) return label;
  }
  return undefined;
}

/** Why a webhook may not connect to this address, or undefined; `allowLoopback`: the local stack's setting. */
export function addressProblem(address: string, allowLoopback: boolean): string | undefined {
  const kind = specialAddressKind(address);
  if (!kind || (kind === 'loopback' && allowLoopback)) return undefined;
  return `${address} is ${kind === 'unspecified' ? 'an' : 'a'} ${kind} address`;
}

/** The URL's host as an address or a name: brackets and a trailing dot dropped, lower case. */
const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
const isLocalhostName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost');

/**
 * What is wrong with a webhook URL as written, or undefined: it must parse, be https: (http: only to a loopback
 * host when `allowLoopback`), carry no credentials, and name no special address. WHATWG URL parsing has already
 * turned numeric and hex IPv4 forms (0x7f000001, 2130706433, 127.1) into dotted quads.
 */
export function webhookUrlProblem(raw: string, allowLoopback: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${url.protocol} is not https:`;
  if (url.username || url.password) return 'it carries a user name or password';
  const host = hostOf(url);
  const loopbackHost = isIP(host) ? specialAddressKind(host) === 'loopback' : isLocalhostName(host);
  if (isIP(host)) {
    const problem = addressProblem(host, allowLoopback);
    if (problem) return problem;
  } else if (isLocalhostName(host) && !allowLoopback) {
    return `${host} is a loopback address`;
  }
  if (url.protocol === 'http:' && !(allowLoopback && loopbackHost)) return 'http: is not https:';
  return undefined;
}

const refusal = (detail: string) => `${WEBHOOK_ADDRESS_RULE} (${detail})`;

/**
 * The check made when a URL is set: as written, then the addresses its host resolves to now. A host that does
 * not resolve yet is accepted; every delivery checks the address it connects to anyway.
 */
export async function checkWebhookUrl(raw: string, allowLoopback: boolean): Promise<void> {
  const problem = webhookUrlProblem(raw, allowLoopback);
  if (problem) throw new InvalidInputError(`webhook_url refused: ${refusal(problem)}`);
  const host = hostOf(new URL(raw));
  if (isIP(host)) return;
  const addresses = await dns.lookup(host, { all: true, verbatim: true }).catch(() => [] as LookupAddress[]);
  for (const a of addresses) {
    const bad = addressProblem(a.address, allowLoopback);
    if (bad) throw new InvalidInputError(`webhook_url refused: ${refusal(`${host} resolves to ${bad.replace(/ is /, ', ')}`)}`);
  }
}

/** A delivery the rule refused: never connected, and not worth retrying. */
export class WebhookRefusedError extends Error {
  constructor(detail: string) {
    super(refusal(detail));
    this.name = 'WebhookRefusedError';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup for the connection itself: it refuses a host with any special address among those it resolves to. */
function guardedLookup(allowLoopback: boolean) {
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(host, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const bad = addresses.map((a) => addressProblem(a.address, allowLoopback)).find(Boolean);
      if (bad) return callback(new WebhookRefusedError(`${host} resolves to ${bad.replace(/ is /, ', ')}`) as NodeJS.ErrnoException, []);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

export type PostResult = { status: number } | { error: Error; refused?: boolean; timedOut?: boolean };

/**
 * One POST under the rule: the URL as written is checked first (an IP host never goes through a lookup), a
 * host name is resolved by guardedLookup, so the address connected to is one that passed, whatever DNS says
 * a moment later (rebinding). No redirects are followed. The whole exchange is bounded by `timeoutMs`.
 */
export function postWebhook(raw: string, headers: Record<string, string>, body: string, timeoutMs: number, allowLoopback: boolean): Promise<PostResult> {
  const problem = webhookUrlProblem(raw, allowLoopback);
  if (problem) return Promise.resolve({ error: new WebhookRefusedError(problem), refused: true });
  const url = new URL(raw);
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let req: ReturnType<typeof httpRequest> | undefined = undefined;
    // Settled once, by whichever comes first: the whole response, an error of the request or of the response, or the timer.
    const settle = (r: PostResult) => {
      clearTimeout(timer);
      resolve(r);
    };
    const timer = setTimeout(() => {
      const error = new Error(`timed out after ${timeoutMs} ms`);
      settle({ error, timedOut: true });
      req?.destroy(error);
    }, timeoutMs);
    req = (secure ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      agent: secure ? agents.https : agents.http,
      lookup: guardedLookup(allowLoopback) as never,
    });
    // A second look at the peer once connected: the lookup above decided it, this catches any path that skipped it.
    req.once('socket', (socket: Socket) => {
      // A kept-alive socket was checked when it connected, and never connects again: no listener left behind.
      if (!socket.connecting) return;
      socket.once('connect', () => {
        const bad = socket.remoteAddress && addressProblem(socket.remoteAddress, allowLoopback);
        if (bad) req?.destroy(new WebhookRefusedError(`connected to ${bad.replace(/ is /, ', ')}`));
      });
    });
    req.once('response', (res: IncomingMessage) => {
      res.resume(); // drained, so the connection can be reused
      res.once('end', () => settle({ status: res.statusCode ?? 0 }));
      res.once('error', (error) => settle({ error }));
    });
    req.once('error', (error) => settle({ error, refused: error instanceof WebhookRefusedError }));
    req.end(body);
  });
}
