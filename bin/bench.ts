// `npm run bench [-- --quick] [-- --json]`: measures a fresh local stack (started in this process, so every
// DynamoDB call of every handler invocation is counted by a middleware of its DynamoDB client): round trips and consumed
// capacity per endpoint, handler overhead, realtime delivery latency, bundle sizes, cold init of every
// function, throughput under a bounded load from a second process (autocannon) and resident memory.
// See BENCHMARKS.md.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { build } from 'esbuild';
import WebSocket from 'ws';
import { Centrifuge } from 'centrifuge';
import { stackPortsEnv } from '../lib/local/ports';
import { invocationObservers, invocations, type Invocation } from '../lib/local/handlers';
import { NOT_FOUND, PUBLISHER, ROUTES, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WS_ROUTES, type FunctionDef } from '../lib/routes';
import { BUNDLING } from '../lib/bundling';
import type { RunningStack } from '../lib/local/stack';
import { isUuid, newMessageId, newUuid } from '../lambdas/core/ids';
import { http1 } from '../lambdas/core/http1';
import { dynamoMiddleware, sendToDynamo } from '../lambdas/core/aws';

const quick = process.argv.includes('--quick');
const asJson = process.argv.includes('--json');
const ROOT = join(__dirname, '..');
const out = (line: string) => {
  if (!asJson) console.log(line);
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const p99 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] : NaN;
};
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-bench-'));
  Object.assign(process.env, {
    DATA_DIR: dataDir,
    ...(await stackPortsEnv()),
    ECHO_BOT: 'off',
    BOT_CACHE_TTL_MS: '30000', // the default: bot settings cached, as on a warm Lambda
    // The benchmark measures the service, not its abuse limits.
    RATE_MESSAGES_PER_MINUTE: '0',
    RATE_CHATS_PER_MINUTE: '0',
    RATE_UPLOADS_PER_MINUTE: '0',
    RATE_SESSIONS_PER_IP_PER_MINUTE: '0',
    MAX_CHATS_PER_USER: '0',
  });
  const { localSettings } = await import('../lib/local/settings');
  const { startLocalStack } = await import('../lib/local/stack');
  const settings = localSettings();
  const stack = await startLocalStack(settings, () => undefined);
  // The functions log one JSON line per request (serialized as on Lambda, so that cost is measured); the
  // lines themselves are dropped here, not to bury the tables.
  const write = process.stdout.write.bind(process.stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (String(chunk).startsWith('{"level"') ? true : write(chunk, ...rest))) as typeof process.stdout.write;
  const webhookReceiver = await startWebhookReceiver();
  try {
    const memory = new MemorySampler(dataDir);
    const atRest = memory.sample();
    const steal = stealSampler();
    const { figures: counted, overheadCase } = await roundTrips(stack.apiUrl, stack.demoBot, webhookReceiver.url);
    // The later phases need no per-invocation figures: invocations stop being observed, and so stop running in
    // an async context, whose promise hooks (Node 20) made every promise of the process cost more (on Lambda
    // there is none: the handler overhead would be overstated).
    invocationObservers.length = 0;
    invocations.disable();
    const overhead = await handlerOverhead(overheadCase, stack.streams);
    const results = {
      machine: `${process.platform} ${process.arch}, Node ${process.version}`,
      quick,
      ...counted,
      ...overhead,
      realtime_ms: await realtime(stack.apiUrl, stack.demoBot.client_key),
      ...(await throughput(stack.apiUrl, stack.demoBot.client_key, memory, atRest)),
      ...(await bundles()),
      cpu_steal_pct: steal(),
    };
    if (results.cpu_steal_pct !== undefined) out(`\nCPU stolen by the host over the whole run: ${results.cpu_steal_pct}%`);
    if (asJson) console.log(JSON.stringify(results));
  } finally {
    webhookReceiver.server.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- 1. DynamoDB round trips and capacity per invocation ------------------------------------------------

type WireRequest = { operation: Parameters<typeof sendToDynamo>[0]; body: Record<string, unknown> };
/** The DynamoDB operation each handler module last performed while counted (the one its endpoint's call is). */
const lastOperation = new Map<string, WireRequest['operation']>();
/**
 * Off while handler overhead is timed: the counter would otherwise copy every body and ask DynamoDB for its
 * consumed capacity (a larger reply) on the handler's side only, a cost of the benchmark, not of the handler.
 * The requests sent meanwhile go to `wireLog` as they are, to be replayed bare.
 */
let counting = true;
const wireLog: WireRequest[] = [];
/** The first event each handler module got from the running stack: replayed for its cold start. */
const firstEvents = new Map<string, unknown>();

async function installCounter(): Promise<Invocation[]> {
  // On the wire: what this sees is exactly one request to DynamoDB (after marshalling, before retries).
  dynamoMiddleware.push((next) => async (operation, body) => {
    if (!counting) {
      // The handler's own body, replayed as it is (nothing changes a body once sent).
      wireLog.push({ operation, body });
      return next(operation, body);
    }
    const inv = invocations.getStore();
    if (inv) lastOperation.set(inv.entry, operation);
    const result = await next(operation, inv ? { ...body, ReturnConsumedCapacity: 'TOTAL' } : body);
    if (inv) {
      inv.counters.calls = (inv.counters.calls ?? 0) + 1;
      for (const c of ([] as { CapacityUnits?: number }[]).concat((result.ConsumedCapacity as never) ?? [])) {
        inv.counters.capacity = (inv.counters.capacity ?? 0) + (c.CapacityUnits ?? 0);
      }
    }
    return result;
  });
  const seen: Invocation[] = [];
  invocationObservers.push((inv) => {
    seen.push(inv);
    if (!firstEvents.has(inv.entry)) firstEvents.set(inv.entry, structuredClone(inv.event));
  });
  return seen;
}


/** Waits in 10 ms steps, `tries` of them at most, until `done()` holds (the caller checks what came of it). */
async function pollUntil(done: () => boolean, tries = 300): Promise<void> {
  for (let i = 0; i < tries && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** One request to the stack's HTTP API (a session token or a bot secret key as Bearer); a 4xx/5xx fails the run. */
async function request(apiUrl: string, method: string, path: string, opts: { token?: string; json?: unknown; form?: FormData } = {}): Promise<any> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: Buffer | undefined;
  if (opts.form) {
    const encoded = new Response(opts.form); // multipart/form-data with its boundary
    body = Buffer.from(await encoded.arrayBuffer());
    headers['content-type'] = encoded.headers.get('content-type') as string;
  } else if (opts.json !== undefined) {
    body = Buffer.from(JSON.stringify(opts.json));
    headers['content-type'] = 'application/json';
  }
  // Sequential requests on one keep-alive socket, as a browser tab makes them; the same HTTP client as the
  // handlers' DynamoDB calls and the bare side of the overhead comparison.
  const url = new URL(path, apiUrl);
  const reply = await http1(method, url, { host: url.host, ...headers }, body, 30_000);
  const status = reply.status;
  const text = reply.body.toString('utf8');
  if (status >= 400) throw new Error(`${method} ${path}: ${status} ${text}`);
  return JSON.parse(text);
}

async function roundTrips(apiUrl: string, demo: { client_key: string; secret_key: string }, webhookUrl: string) {
  const seen = await installCounter();
  const runs = quick ? 3 : 7;
  const http = (method: string, path: string, opts: { token?: string; json?: unknown; form?: FormData; bot?: boolean } = {}) =>
    request(apiUrl, method, path, { ...opts, token: opts.bot ? demo.secret_key : opts.token });
  /** Runs `act` (once to warm up, then `runs` times) and returns the median calls and capacity of `entry`. */
  const measure = async (entry: string, act: (i: number) => Promise<unknown>) => {
    await act(-1);
    const calls: number[] = [];
    const capacity: number[] = [];
    for (let i = 0; i < runs; i++) {
      seen.length = 0;
      await act(i);
      await new Promise((r) => setTimeout(r, 5));
      const inv = seen.find((s) => s.entry === entry);
      if (!inv) throw new Error(`${entry} was not invoked`);
      calls.push(inv.counters.calls ?? 0);
      capacity.push(inv.counters.capacity ?? 0);
    }
    return { calls: median(calls), capacity: round(median(capacity), 2) };
  };
  const entry = (id: string) => [...ROUTES, ...WS_ROUTES].find((r) => r.id === id)!.entry;
  const trips: Record<string, number> = {};
  const units: Record<string, number> = {};
  const record = (key: string, m: { calls: number; capacity: number }) => {
    trips[key] = m.calls;
    units[key] = m.capacity;
  };

  let n = 0;
  record('create_session_new', await measure(entry('create_session'), () => http('POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: `bench-${n++}` } })));
  record('create_session_returning', await measure(entry('create_session'), () => http('POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: 'bench-returning' } })));
  const s = await http('POST', '/api/client/session', { json: { client_key: demo.client_key, external_id: 'bench-user' } });
  const token = s.session_token as string;
  const chat = await http('POST', '/api/client/chats', { token, json: { name: 'bench' } });
  record('list_chats', await measure(entry('list_chats'), () => http('GET', '/api/client/chats', { token })));
  record('create_chat', await measure(entry('create_chat'), () => http('POST', '/api/client/chats', { token, json: { name: 'more' } })));
  record('create_message', await measure(entry('create_message'), () => http('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'hello' } })));
  record('list_messages', await measure(entry('list_messages'), () => http('GET', `/api/client/chats/${chat.id}/messages`, { token })));
  record('mark_read', await measure(entry('mark_read'), () => http('POST', `/api/client/chats/${chat.id}/read`, { token })));
  const form = () => {
    const fd = new FormData();
    fd.append('file', new Blob([Buffer.alloc(1024, 1)], { type: 'image/png' }), 'b.png');
    return fd;
  };
  record('upload_file', await measure(entry('upload_file'), () => http('POST', '/api/client/files', { token, form: form() })));
  record('bot_list_chats', await measure(entry('bot_list_chats'), () => http('GET', '/api/bot/chats?limit=20', { bot: true })));
  record('bot_list_messages', await measure(entry('bot_list_messages'), () => http('GET', `/api/bot/chats/${chat.id}/messages`, { bot: true })));
  record('bot_create_message', await measure(entry('bot_create_message'), () => http('POST', `/api/bot/chats/${chat.id}/messages`, { bot: true, json: { content: 'hi' } })));
  record('bot_mark_read', await measure(entry('bot_mark_read'), () => http('POST', `/api/bot/chats/${chat.id}/read`, { bot: true })));
  // An unknown path: the default route's 404 {error} (no DynamoDB at all).
  record('not_found', await measure(NOT_FOUND.entry, () => fetch(`${apiUrl}/api/client/nope`).then((r) => r.text())));
  record('bot_upload_file', await measure(entry('bot_upload_file'), () => {
    const fd = form();
    fd.append('chat_id', chat.id);
    return http('POST', '/api/bot/files', { bot: true, form: fd });
  }));

  // Realtime: $connect (no token in the URL), then $default with connect + subscribe in one frame.
  const rt = s.realtime as { url: string; token: string; channel: string };
  const sockets: WebSocket[] = [];
  record('ws_connect', await measure(entry('ws_connect'), async () => {
    const ws = new WebSocket(rt.url);
    sockets.push(ws);
    await new Promise((r) => ws.once('open', r));
  }));
  record('ws_default', await measure(entry('ws_default'), async (i) => {
    const ws = sockets[i + 1];
    const reply = new Promise((r) => ws.once('message', r));
    ws.send(`${JSON.stringify({ id: 1, connect: { token: rt.token } })}\n${JSON.stringify({ id: 2, subscribe: { channel: rt.channel } })}`);
    await reply;
  }));
  /** Waits until `e` has been invoked since `seen` was last cleared. */
  const waitFor = (e: string, tries?: number) => pollUntil(() => seen.some((x) => x.entry === e), tries);
  // The publisher, per message (the sockets above are subscribers of this channel).
  const published = await measure(PUBLISHER.entry, async () => {
    seen.length = 0;
    await http('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'fan-out' } });
    await waitFor(PUBLISHER.entry, 200);
  });
  record('publisher_per_message', published);
  for (const ws of sockets) ws.close();

  // Webhooks, on a bot of their own (its settings are cached from its first request, as on Lambda): the
  // stream dispatcher per user message, and the deliverer per job (a local receiver answers 200).
  const { createBot, updateBot } = await import('../lambdas/core/bots');
  const hooked = await createBot({ name: 'bench webhooks' });
  await updateBot(hooked.bot.id, { webhook_url: webhookUrl });
  const hs = await http('POST', '/api/client/session', { json: { client_key: hooked.bot.client_key, external_id: 'bench-webhooks' } });
  const hchat = await http('POST', '/api/client/chats', { token: hs.session_token, json: { name: 'hooks' } });
  const sendHooked = async (e: string) => {
    seen.length = 0;
    await http('POST', `/api/client/chats/${hchat.id}/messages`, { token: hs.session_token, json: { content: 'hook' } });
    await waitFor(e);
  };
  record('webhook_dispatcher_per_message', await measure(WEBHOOK_DISPATCHER.entry, () => sendHooked(WEBHOOK_DISPATCHER.entry)));
  record('webhook_deliverer_per_job', await measure(WEBHOOK_DELIVERER.entry, () => sendHooked(WEBHOOK_DELIVERER.entry)));
  // $disconnect's event, for its cold start below (the sockets closed above).
  await pollUntil(() => firstEvents.has(entry('ws_disconnect')));

  out('\nDynamoDB round trips and consumed capacity units per request (median, bot settings cached)');
  out(`${'endpoint'.padEnd(28)}${'round trips'.padStart(12)}${'capacity'.padStart(10)}`);
  for (const k of Object.keys(trips)) out(`${k.padEnd(28)}${String(trips[k]).padStart(12)}${String(units[k]).padStart(10)}`);
  return { figures: { round_trips: trips, capacity_units: units }, overheadCase: { http, entry, token, chatId: chat.id as string } };
}

// ---- 2. Handler overhead: the endpoint through the local HTTP gateway vs the bare DynamoDB call it makes --

async function handlerOverhead(
  ctx: {
    http: (method: string, path: string, opts?: { token?: string; json?: unknown }) => Promise<unknown>;
    entry: (id: string) => string;
    token: string;
    chatId: string;
  },
  streams: RunningStack['streams'],
) {
  const { http, entry } = ctx;
  const samples = quick ? 20 : 100;
  const cases: [string, () => Promise<unknown>][] = [
    ['list_chats', () => http('GET', '/api/client/chats', { token: ctx.token })],
    ['create_chat', () => http('POST', '/api/client/chats', { token: ctx.token, json: { name: 'o' } })],
    ['list_messages', () => http('GET', `/api/client/chats/${ctx.chatId}/messages?limit=20`, { token: ctx.token })],
    ['create_message', () => http('POST', `/api/client/chats/${ctx.chatId}/messages`, { token: ctx.token, json: { content: 'o' } })],
    ['mark_read', () => http('POST', `/api/client/chats/${ctx.chatId}/read`, { token: ctx.token })],
  ];
  const ratio: Record<string, number> = {};
  const latency: Record<string, { median: number; p99: number; bare_median: number }> = {};
  // On AWS the stream's reader and its consumers (publisher, webhook dispatcher) run apart from the table's
  // requests; here they would share this thread and DynamoDB Local with the request being timed. Paused
  // (what is written meanwhile is read after), and the benchmark's own counting is off.
  await streams.pause();
  counting = false;
  try {
    for (const [id, request] of cases) {
      await request();
      const through: number[] = [];
      const direct: number[] = [];
      for (let i = 0; i < samples; i++) {
        // Interleaved: the endpoint, then the very request it sent to DynamoDB, replayed bare on the same wire
        // client (sendToDynamo: signing, HTTP, JSON; no handler, no gateway). A write
        // that made a chat or a message is replayed with a fresh id in place of the one made, so it is the same
        // write again, not one refused by its condition (a replay that fails fails the run: a quick error
        // would flatter the ratio).
        wireLog.length = 0;
        let t = performance.now();
        const made = (await request()) as { id?: unknown };
        through.push(performance.now() - t);
        // The request's own call: the operation its endpoint performed when counted (anything else in flight,
        // such as a late webhook job, is not it).
        const op = lastOperation.get(entry(id));
        const cmd = [...wireLog].reverse().find((w) => w.operation === op);
        if (!cmd) throw new Error(`${id}: no ${op} request on the wire to replay`);
        // Its timestamps are renewed too: a replayed update that writes the very values just written changes
        // nothing, and DynamoDB Local then skips the stream record, about 0.2 ms less than the handler's write
        // (mark_read's ratio read 1.43 against 1.23 with the bare write doing the same work).
        const madeId = typeof made?.id === 'string' ? made.id : undefined;
        const fresh = madeId && (isUuid(madeId) ? newUuid() : newMessageId(Date.now()));
        const body = mapStrings(cmd.body, (str) => {
          const replaced = madeId && fresh ? str.split(madeId).join(fresh) : str;
          return ISO_TIME.test(replaced) ? new Date().toISOString() : replaced;
        });
        t = performance.now();
        await sendToDynamo(cmd.operation, body);
        direct.push(performance.now() - t);
      }
      ratio[id] = round(median(through) / median(direct), 2);
      latency[id] = { median: round(median(through)), p99: round(p99(through)), bare_median: round(median(direct)) };
    }
  } finally {
    counting = true;
    streams.resume();
  }
  out('\nHandler overhead: endpoint through the local HTTP gateway vs its bare DynamoDB call (ms, interleaved)');
  out(`${'endpoint'.padEnd(28)}${'median'.padStart(8)}${'p99'.padStart(8)}${'bare'.padStart(8)}${'ratio'.padStart(8)}`);
  for (const id of Object.keys(ratio)) {
    const l = latency[id];
    out(`${id.padEnd(28)}${String(l.median).padStart(8)}${String(l.p99).padStart(8)}${String(l.bare_median).padStart(8)}${String(ratio[id]).padStart(8)}`);
  }
  return { overhead_ratio: ratio, latency_ms: latency };
}

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A deep copy of `value` with every string in it passed through `map`. */
function mapStrings<T>(value: T, map: (s: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, map)) as T;
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, map)])) as T;
  }
  return structuredClone(value);
}

// ---- 3. Realtime delivery --------------------------------------------------------------------------------

async function realtime(apiUrl: string, clientKey: string) {
  const post = (path: string, json: unknown, token?: string) => request(apiUrl, 'POST', path, { json, token });
  /** One user's channel with `subscribers` centrifuge clients on it, and a chat to post to. */
  const channel = async (externalId: string, subscribers: number) => {
    const session = await post('/api/client/session', { client_key: clientKey, external_id: externalId });
    const chat = await post('/api/client/chats', { name: 'latency' }, session.session_token);
    /** Per message id: how many subscribers have it, and the wait of the deliver() that posted it. */
    const received = new Map<string, number>();
    const waiting = new Map<string, () => void>();
    const connect = async () => {
      const client = new Centrifuge(session.realtime.url, { token: session.realtime.token, websocket: WebSocket as never });
      const sub = client.newSubscription(session.realtime.channel);
      const arrivals = new Map<string, number>();
      sub.on('publication', (ctx) => {
        const id = (ctx.data as any).data?.id;
        arrivals.set(id, performance.now());
        const n = (received.get(id) ?? 0) + 1;
        received.set(id, n);
        if (n === subscribers) waiting.get(id)?.();
      });
      const ready = new Promise((r) => sub.once('subscribed', r));
      sub.subscribe();
      client.connect();
      await ready;
      return { client, arrivals };
    };
    const clients = await Promise.all(Array.from({ length: subscribers }, connect));
    /** Posts one message; resolves with the time from the POST's return to each subscriber's publication. */
    const deliver = async (i: number) => {
      // Messages come at random points of the poller's cycle (a read every 10 ms when idle), as real ones do,
      // not at the one point a fixed rhythm of sending would settle on.
      await new Promise((r) => setTimeout(r, Math.random() * 15));
      const sent = await post(`/api/client/chats/${chat.id}/messages`, { content: `m${i}` }, session.session_token);
      const returned = performance.now();
      // Woken by the last subscriber's publication (no polling timer competing with the delivery); a second
      // at most, after which a missing one counts as NaN.
      if ((received.get(sent.id) ?? 0) < subscribers) {
        await new Promise<void>((r) => {
          const timer = setTimeout(r, 1000);
          waiting.set(sent.id, () => (clearTimeout(timer), r()));
        });
      }
      waiting.delete(sent.id);
      received.delete(sent.id);
      return clients.map((c) => (c.arrivals.get(sent.id) ?? NaN) - returned);
    };
    return { clients, deliver };
  };
  // The single subscriber and the 50 are measured interleaved, message by message, as the handler overhead is:
  // the ratio of the two then holds under the same load of the machine (a shared host's CPU steal comes and
  // goes within seconds).
  const one = await channel('bench-realtime', 1);
  const fifty = await channel('bench-realtime-50', 50);
  // A few messages first, not counted: the first deliveries to new sockets warm up code paths (JIT) that the
  // steady state does not pay for.
  for (let i = 0; i < 5; i++) {
    await one.deliver(i);
    await fifty.deliver(i);
  }
  const single: number[] = [];
  /** Per message, its slowest subscriber of the 50 (a fan-out is done when all have it); and every delivery. */
  const fanout: number[] = [];
  const each: number[] = [];
  const steal = stealSampler();
  // In a shuffled order, not strictly alternating: a message's wait for the poller's next read depends on
  // where in its cycle the previous delivery ended, and a fan-out ends later in it than a single delivery, so
  // strict alternation gave each kind a differently placed start (measured: 0.2–0.6 ms longer waits for the
  // fan-out's messages). Shuffled, both kinds follow either kind alike.
  // 300 of each: the target compares two medians of spread-out times (a message waits 0-10 ms for the
  // poller's next read), and with 200 of each the margin 2 × single − fan-out still moved by about 0.8 ms
  // between runs from sampling alone.
  const perKind = quick ? 50 : 300;
  const order = shuffled([...Array(perKind).fill(1), ...Array(perKind).fill(50)] as (1 | 50)[]);
  for (const [i, kind] of order.entries()) {
    if (kind === 1) {
      single.push(...(await one.deliver(i)));
      continue;
    }
    const times = await fifty.deliver(i);
    fanout.push(Math.max(...times));
    each.push(...times);
  }
  const stolen = steal();
  for (const c of [...one.clients, ...fifty.clients]) c.client.disconnect();
  const result = {
    median: round(median(single)),
    p99: round(p99(single)),
    fanout50_median: round(median(fanout)),
    fanout50_p99: round(p99(fanout)),
    fanout50_each_median: round(median(each)),
    messages: single.length,
    cpu_steal_pct: stolen,
  };
  out(
    `\nRealtime delivery, POST returned → publication (${single.length} messages): median ${result.median} ms, p99 ${result.p99} ms;` +
      ` 50 subscribers (interleaved, ${fanout.length} messages), slowest of them: median ${result.fanout50_median} ms, p99 ${result.fanout50_p99} ms` +
      ` (each subscriber's delivery: median ${result.fanout50_each_median} ms)` +
      `${stolen === undefined ? '' : `; CPU stolen by the host meanwhile: ${stolen}%`}`,
  );
  return result;
}

/** The items in a random order (Fisher–Yates). */
function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/**
 * The share of this machine's CPU time the hypervisor gave to others (steal, /proc/stat) from now until the
 * returned function is called; undefined where /proc/stat is not there. A figure measured while it was high
 * says more about the host than about the code.
 */
function stealSampler(): () => number | undefined {
  const read = () => {
    try {
      const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
      return { steal: cpu[7] ?? 0, total: cpu.reduce((a, b) => a + b, 0) };
    } catch {
      return undefined;
    }
  };
  const before = read();
  return () => {
    const after = read();
    if (!before || !after || after.total === before.total) return undefined;
    return round((100 * (after.steal - before.steal)) / (after.total - before.total), 0);
  };
}

// ---- 4. Bundles and cold init ----------------------------------------------------------------------------

async function bundles() {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-bundles-'));
  const defs: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, NOT_FOUND];
  const kb: Record<string, number> = {};
  const cold: Record<string, number> = {};
  /** Of the cold init, the module load alone (the rest is the first event). */
  const load: Record<string, number> = {};
  for (const def of defs) {
    const file = join(outdir, def.id, 'index.js');
    // The options the CDK's NodejsFunction passes to esbuild (lib/bundling.ts).
    await build({
      entryPoints: [join(ROOT, def.entry)],
      outfile: file,
      bundle: true,
      platform: 'node',
      target: BUNDLING.target,
      format: 'cjs',
      minify: BUNDLING.minify,
      sourcemap: BUNDLING.sourceMap,
      sourcesContent: BUNDLING.sourcesContent,
      mainFields: BUNDLING.mainFields,
      logLevel: 'silent',
    });
    kb[def.id] = round(statSync(file).size / 1024);
  }
  // Cold init: a fresh Node process loads the bundle and handles the very event the function got from the
  // running stack earlier in this run (median of 5). Its logs are dropped; a 5xx or a throw fails the run.
  for (const def of defs) {
    const event = firstEvents.get(def.entry);
    if (event === undefined) throw new Error(`cold init of ${def.id}: the stack never invoked it, no event to replay`);
    const times: number[] = [];
    const loads: number[] = [];
    for (let i = 0; i < (quick ? 3 : 5); i++) {
      const script = `process.stdout.write=()=>true;const t0=performance.now();const m=require(${JSON.stringify(join(outdir, def.id, 'index.js'))});const load=performance.now()-t0;m.handler(${JSON.stringify(event)},{awsRequestId:'cold'}).then(r=>{process.stderr.write(JSON.stringify({ms:performance.now()-t0,load,status:r&&r.statusCode})+'\\n');process.exit(0)})`;
      // Not spawnSync: the stack's gateways, queue and receiver live in this process and must keep answering.
      const r = await run(process.execPath, ['-e', script]);
      const last = r.stderr.split('\n').find((l) => l.startsWith('{"ms"'));
      const line = (last ? JSON.parse(last) : {}) as { ms?: number; load?: number; status?: number };
      if (line.ms === undefined || line.load === undefined || (line.status ?? 200) >= 500) throw new Error(`cold init of ${def.id}: ${r.stderr}`);
      times.push(line.ms);
      loads.push(line.load);
    }
    cold[def.id] = round(median(times));
    load[def.id] = round(median(loads));
    if (process.env.BENCH_VERBOSE) console.error(`cold init ${def.id}: ${times.map((t) => round(t)).join(', ')} ms (load ${loads.map((t) => round(t)).join(', ')})`);
  }
  rmSync(outdir, { recursive: true, force: true });
  out(`\nBundles (minified, dependencies inside) and cold init (fresh process: load + first event, median of ${quick ? 3 : 5}; of it, the load)`);
  for (const id of Object.keys(kb)) out(`${id.padEnd(28)}${`${kb[id]} KB`.padStart(12)}${`${cold[id]} ms`.padStart(12)}${`${load[id]} ms`.padStart(12)}`);
  return { bundle_kb: kb, cold_init_ms: cold, cold_load_ms: load };
}

/** A command's stderr once it exits (killed after 30 s). */
function run(command: string, args: string[]): Promise<{ stderr: string }> {
  const child = spawn(command, args, { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ stderr });
    }),
  );
}

// ---- 5. Throughput and memory ----------------------------------------------------------------------------

/** Resident memory (MB) of the stack's processes: this Node process (gateways, handlers; the benchmark's own
 * clients too), DynamoDB Local (Java) and the S3 emulator, read from /proc. */
class MemorySampler {
  private readonly pids: Record<string, number>;
  constructor(dataDir: string) {
    const p = JSON.parse(readFileSync(join(dataDir, 'local-stack.json'), 'utf8')) as Record<string, number>;
    this.pids = { node: process.pid, dynamodb_local: p.dynamodb, s3_emulator: p.s3 };
  }
  sample(): Record<string, number> {
    const mb: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      try {
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
        mb[name] = round(kb / 1024);
      } catch {
        mb[name] = NaN; // not Linux, or gone
      }
    }
    mb.total = round(Object.values(mb).reduce((a, b) => a + b, 0));
    return mb;
  }
}

/** autocannon in a second process (bin/bench-load.ts): one connection per user, for `seconds`. */
function autocannon(cfg: { url: string; method: 'GET' | 'POST'; body?: string; seconds: number; users: { token: string; path: string }[] }) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bin', 'bench-load.ts'), JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  return new Promise<{ requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number; errors: number }>((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`autocannon exited ${code}`)))),
  );
}

async function throughput(apiUrl: string, clientKey: string, memory: MemorySampler, atRest: Record<string, number>) {
  const post = (path: string, json: unknown, token?: string) => request(apiUrl, 'POST', path, { json, token });
  // Ten users, each with a chat: ten connections, each one user's client.
  const users: { token: string; chatId: string }[] = [];
  for (let i = 0; i < 10; i++) {
    const session = await post('/api/client/session', { client_key: clientKey, external_id: `bench-load-${i}` });
    const chat = await post('/api/client/chats', { name: 'load' }, session.session_token);
    users.push({ token: session.session_token, chatId: chat.id });
  }
  const seconds = quick ? 3 : 10;
  const rps: Record<string, number> = {};
  const latency: Record<string, { p50: number; p99: number }> = {};
  let peak: Record<string, number> = {};
  const cases: [string, Parameters<typeof autocannon>[0]][] = [
    ['list_chats', { url: apiUrl, method: 'GET', seconds, users: users.map((u) => ({ token: u.token, path: '/api/client/chats' })) }],
    ['create_message', { url: apiUrl, method: 'POST', body: JSON.stringify({ content: 'load' }), seconds, users: users.map((u) => ({ token: u.token, path: `/api/client/chats/${u.chatId}/messages` })) }],
  ];
  for (const [id, cfg] of cases) {
    const sampler = setInterval(() => {
      const now = memory.sample();
      if (!(peak.total >= now.total)) peak = now;
    }, 500);
    try {
      const r = await autocannon(cfg);
      if (r.non2xx || r.errors) throw new Error(`load on ${id}: ${r.non2xx} non-2xx replies, ${r.errors} errors`);
      rps[id] = round(r.requests.average, 0);
      latency[id] = { p50: r.latency.p50, p99: r.latency.p99 };
    } finally {
      clearInterval(sampler);
    }
  }
  const rss = { at_rest: atRest, under_load: peak };
  out(`\nThroughput: 10 users, one connection each, ${seconds} s, from a second process (autocannon)`);
  for (const id of Object.keys(rps)) out(`${id.padEnd(28)}${`${rps[id]} req/s`.padStart(12)}   p50 ${latency[id].p50} ms, p99 ${latency[id].p99} ms`);
  out(`\nResident memory (MB)${''.padEnd(9)}${Object.keys(atRest).map((k) => k.padStart(16)).join('')}`);
  out(`${'at rest'.padEnd(29)}${Object.values(atRest).map((v) => String(v).padStart(16)).join('')}`);
  out(`${'under load (peak)'.padEnd(29)}${Object.values(peak).map((v) => String(v).padStart(16)).join('')}`);
  return { rps, load_latency_ms: latency, rss_mb: rss };
}

/** The bench bot's webhook receiver: answers 200 to every delivery. */
async function startWebhookReceiver() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhook` };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
