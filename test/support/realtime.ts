// The real `centrifuge` client over `ws`, as a browser would use it with the session's realtime block.
import { Centrifuge, type PublicationContext, type Subscription, type SubscriptionOptions } from 'centrifuge';
import WebSocket from 'ws';
import { checkSchema } from './openapi';
import { until } from './wait';
import type { Publication, RealtimeBlock } from './contract';

export { until } from './wait';
export type { Publication, RealtimeBlock } from './contract';

/** A subscribed client and what it received: the service's publications, or `P` for frames a test posts itself. */
export interface LiveClient<P = Publication> {
  client: Centrifuge;
  sub: Subscription;
  publications: P[];
  clientId(): string;
  /** The first publication the predicate accepts (narrowed by a type-guard predicate). */
  waitFor<T extends P>(predicate: (data: P) => data is T, timeoutMs?: number): Promise<T>;
  waitFor(predicate: (data: P) => boolean, timeoutMs?: number): Promise<P>;
  close(): void;
}

/** The client's options, and its subscription's (`subscription`, e.g. `{ recoverable: true }`). */
type CentrifugeOptions = Partial<ConstructorParameters<typeof Centrifuge>[1]> & { subscription?: Partial<SubscriptionOptions> };

/**
 * Connects with the session's realtime block and subscribes to its channel; resolves once subscribed. With
 * `documented` false the publications are not checked against docs/openapi.yaml (a test that posts its own
 * frames through the @connections API, which are not the service's publications).
 */
export function liveClient<P = unknown>(rt: RealtimeBlock, options: CentrifugeOptions, documented: false): Promise<LiveClient<P>>;
export function liveClient(rt: RealtimeBlock, options?: CentrifugeOptions, documented?: true): Promise<LiveClient>;
export async function liveClient(rt: RealtimeBlock, options: CentrifugeOptions = {}, documented = true): Promise<LiveClient<unknown>> {
  const { subscription, ...clientOptions } = options;
  const client = new Centrifuge(rt.url, {
    token: rt.token,
    websocket: WebSocket as never,
    minReconnectDelay: 50,
    maxReconnectDelay: 200,
    ...clientOptions,
  });
  const publications: unknown[] = [];
  const sub = client.newSubscription(rt.channel, subscription);
  // Every publication is checked against docs/openapi.yaml's RealtimePublication; waitFor fails on a mismatch.
  const undocumented: string[] = [];
  sub.on('publication', (ctx: PublicationContext) => {
    if (documented) undocumented.push(...checkSchema('RealtimePublication', ctx.data));
    publications.push(ctx.data);
  });
  let id = '';
  client.on('connected', (ctx) => (id = ctx.client));
  const subscribed = new Promise<void>((resolve, reject) => {
    sub.once('subscribed', () => resolve());
    sub.once('error', (e) => reject(new Error(`subscribe failed: ${JSON.stringify(e.error)}`)));
    client.once('disconnected', (e) => reject(new Error(`disconnected: ${e.code} ${e.reason}`)));
  });
  sub.subscribe();
  client.connect();
  await subscribed;
  return {
    client,
    sub,
    publications,
    clientId: () => id,
    waitFor: async (predicate: (data: unknown) => boolean, timeoutMs = 15_000) => {
      let found: unknown;
      await until(() => (found = publications.find(predicate)) !== undefined || undocumented.length > 0, timeoutMs, 'a publication');
      if (undocumented.length > 0) throw new Error(`Publication not as documented (docs/openapi.yaml):\n${undocumented.join('\n')}`);
      return found;
    },
    close: () => client.disconnect(),
  };
}

/** A frame of Centrifuge's JSON protocol from the gateway, a reply (by id) or a push, as far as tests read it. */
export interface Frame {
  id?: number;
  error?: { code: number; message: string };
  connect?: { client: string; version: string; expires: boolean; ttl: number };
  refresh?: { client: string; version: string; expires: boolean; ttl: number };
  subscribe?: Record<string, never>;
  unsubscribe?: Record<string, never>;
  push?: { pub?: { data?: Publication }; disconnect?: { code: number; reason: string } };
}

/** A WebSocket message as text: the gateway sends text messages (ws hands each over as one Buffer). */
export const textOf = (data: WebSocket.RawData): string => (Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? Buffer.from(data) : data).toString();

/** The frames of one WebSocket message: newline-separated JSON. */
export const framesOf = (data: WebSocket.RawData): Frame[] => textOf(data).split('\n').map((l) => JSON.parse(l) as Frame);

/** Opens a raw socket and sends frames: for protocol cases the client library never produces. */
export async function rawSocket(url: string): Promise<{ ws: WebSocket; request(frame: string): Promise<Frame[]> }> {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    request: (frame) =>
      new Promise((resolve) => {
        ws.once('message', (data) => resolve(framesOf(data)));
        ws.send(frame);
      }),
  };
}

/** `liveClient` for one test file: every client it opens is closed after each test (call at the file's top level). */
export function liveClientsClosedAfterEach(): (...args: Parameters<typeof liveClient>) => Promise<LiveClient> {
  const clients: LiveClient[] = [];
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  return async (...args) => {
    const c = await liveClient(...args);
    clients.push(c);
    return c;
  };
}
