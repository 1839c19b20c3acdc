// `npm run bench [-- --quick] [-- --json] [-- --before <git-ref>]`: measures a fresh local stack started in
// this process: DynamoDB round trips and consumed capacity per endpoint (an SDK middleware on the functions'
// shared DynamoDB client), realtime delivery through the real `centrifuge` client, throughput under load from
// a second process (autocannon), resident memory, and per function its bundle and cold init. With
// `--before <git-ref>`, the functions of that commit are bundled and cold-started too, in the same run, for a
// before/after table. See docs/benchmarks.md.
import { mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, existsSync, mkdirSync } from 'node:fs';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { build, type Loader, type Metafile } from 'esbuild';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import WebSocket from 'ws';
import { Centrifuge } from 'centrifuge';
import { stackPortsEnv } from '../lib/local/ports';
import { invocationObservers, invocations, type Invocation } from '../lib/local/handlers';
import { NOT_FOUND, ROUTES, WS_ROUTES, type FunctionDef } from '../lib/routes';
import { PUBLISHER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER } from '../lib/consumers';
import { BUNDLING } from '../lib/bundling';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const asJson = argv.includes('--json');
const beforeRef = ((i) => (i < 0 ? undefined : argv[i].includes('=') ? argv[i].split('=')[1] : argv[i + 1]))(argv.findIndex((a) => a === '--before' || a.startsWith('--before=')));
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

/** Every function CDK deploys, in the order of the tables. */
const FUNCTIONS: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, NOT_FOUND];

async function main(): Promise<void> {
  if (beforeRef === '' || beforeRef?.startsWith('--')) throw new Error('--before needs a git ref (a commit, a tag, HEAD~1...)');
  // The old code first: a bad ref fails the run before the stack starts.
  const before = beforeRef ? checkoutBefore(beforeRef) : undefined;
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
  // The functions log one JSON line per request (as on Lambda, so that cost is measured); the lines themselves
  // are dropped here, not to bury the tables.
  const write = process.stdout.write.bind(process.stdout) as (chunk: unknown, ...rest: unknown[]) => boolean;
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (String(chunk).startsWith('{"level"') ? true : write(chunk, ...rest))) as typeof process.stdout.write;
  const webhookReceiver = await startWebhookReceiver();
  try {
    const memory = new MemorySampler(dataDir);
    const atRest = memory.sample();
    const steal = stealSampler();
    const counted = await roundTrips(stack.apiUrl, stack.demoBot, webhookReceiver.url);
    const results = {
      machine: {
        nproc: availableParallelism(), // as `nproc` counts
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
      },
      quick,
      ...counted,
      realtime_ms: await realtime(stack.apiUrl, stack.demoBot.client_key),
      ...(await throughput(stack.apiUrl, stack.demoBot.client_key, memory, atRest)),
      ...(await bundlesAndColdInit(readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim(), before)),
      cpu_steal_pct: steal(),
    };
    const targets = checkTargets(results);
    if (results.cpu_steal_pct !== undefined) out(`\nCPU stolen by the host over the whole run: ${results.cpu_steal_pct}%`);
    if (asJson) console.log(JSON.stringify({ ...results, targets }));
  } finally {
    webhookReceiver.server.close();
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (before) rmSync(before.dir, { recursive: true, force: true });
  }
}

// ---- 1. DynamoDB round trips and capacity per invocation ------------------------------------------------

/** The first event each handler module got from the running stack: replayed for its cold start. */
const firstEvents = new Map<string, unknown>();

/**
 * Counts, per handler invocation (lib/local/handlers.ts runs each in its own async context while observed),
 * every HTTP request its DynamoDB calls send, and the capacity they consumed. Handlers load in this process,
 * so `dynamo` is their very client; the document client shares its middleware stack with the DynamoDB
 * client it wraps, so the middleware sees every command. Returns the invocations seen, and `uninstall`.
 */
async function installCounter(): Promise<{ seen: Invocation[]; uninstall: () => void }> {
  // Imported once the stack has set the environment the module's config reads.
  const { dynamo } = await import('../lambdas/aws/dynamo');
  // Once per command: ask DynamoDB for the capacity consumed (on a copy of the input: the caller's is untouched).
  dynamo.middlewareStack.add(
    (next) => async (args) => {
      if (!invocations.getStore()) return next(args);
      return next({ ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' } } as typeof args);
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );
  // Inside the retry loop: once per HTTP request sent, so an SDK retry counts as the round trip it is.
  const perRequest: FinalizeRequestMiddleware<object, object> = (next) => async (args) => {
    const inv = invocations.getStore();
    if (!inv) return next(args);
    inv.counters.calls = (inv.counters.calls ?? 0) + 1;
    const result = await next(args);
    const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
    for (const c of ([] as { CapacityUnits?: number }[]).concat(consumed ?? [])) inv.counters.capacity = (inv.counters.capacity ?? 0) + (c.CapacityUnits ?? 0);
    return result;
  };
  dynamo.middlewareStack.addRelativeTo(perRequest as never, { relation: 'after', toMiddleware: 'retryMiddleware', name: 'benchRoundTrips' });
  const seen: Invocation[] = [];
  const observe = (inv: Invocation) => {
    seen.push(inv);
    if (!firstEvents.has(inv.entry)) firstEvents.set(inv.entry, structuredClone(inv.event));
  };
  invocationObservers.push(observe);
  return {
    seen,
    uninstall: () => {
      dynamo.middlewareStack.remove('benchConsumedCapacity');
      dynamo.middlewareStack.remove('benchRoundTrips');
      // Unobserved, invocations run without an async context again (its promise hooks tax every promise of
      // the process, which the later phases would measure; Lambda has none).
      invocationObservers.splice(invocationObservers.indexOf(observe), 1);
      invocations.disable();
    },
  };
}

/** Waits in 10 ms steps, `tries` of them at most, until `done()` holds (the caller checks what came of it). */
async function pollUntil(done: () => boolean, tries = 300): Promise<void> {
  for (let i = 0; i < tries && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** Sequential requests on one keep-alive socket, as a browser tab makes them. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

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
  if (body) headers['content-length'] = String(body.length);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(new URL(path, apiUrl), { method, headers, agent, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no reply in 30 s`)));
    req.on('error', reject);
    req.end(body);
  });
  if (status >= 400) throw new Error(`${method} ${path}: ${status} ${text}`);
  return JSON.parse(text);
}

async function roundTrips(apiUrl: string, demo: { client_key: string; secret_key: string }, webhookUrl: string) {
  const { seen, uninstall } = await installCounter();
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
  // A streamed answer: the typing indicator (calls within 2 s of the last publication are refused writes),
  // then edits of one message.
  record('bot_typing', await measure(entry('bot_typing'), () => http('POST', `/api/bot/chats/${chat.id}/typing`, { bot: true, json: {} })));
  const streamed = await http('POST', `/api/bot/chats/${chat.id}/messages`, { bot: true, json: { content: 'Once' } });
  let edits = 0;
  record('bot_edit_message', await measure(entry('bot_edit_message'), () =>
    http('PATCH', `/api/bot/chats/${chat.id}/messages/${streamed.id}`, { bot: true, json: { content: `Once upon a time ${edits++}` } }),
  ));
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
  const { createBot, updateBot } = await import('../lambdas/domain/bots');
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
  // $disconnect's event, for its cold start (the sockets closed above).
  await pollUntil(() => firstEvents.has(entry('ws_disconnect')));
  uninstall();

  out('\nDynamoDB round trips (HTTP requests, SDK retries included) and consumed capacity units per request (median, bot settings cached)');
  out(`${'endpoint'.padEnd(32)}${'round trips'.padStart(12)}${'capacity'.padStart(10)}`);
  for (const k of Object.keys(trips)) out(`${k.padEnd(32)}${String(trips[k]).padStart(12)}${String(units[k]).padStart(10)}`);
  return { round_trips: trips, capacity_units: units };
}

// ---- 2. Realtime delivery --------------------------------------------------------------------------------

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
      // At a random point of the local stream poller's cycle (a read every 10 ms when idle), as real messages come.
      await new Promise((r) => setTimeout(r, Math.random() * 15));
      const sent = await post(`/api/client/chats/${chat.id}/messages`, { content: `m${i}` }, session.session_token);
      const returned = performance.now();
      // Woken by the last subscriber's publication; a second at most, after which a missing one counts as NaN.
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
  const one = await channel('bench-realtime', 1);
  const fifty = await channel('bench-realtime-50', 50);
  // A few messages first, not counted (first deliveries to new sockets warm up code paths).
  for (let i = 0; i < 5; i++) {
    await one.deliver(i);
    await fifty.deliver(i);
  }
  const single: number[] = [];
  /** Per message, its slowest subscriber of the 50 (a fan-out is done when all have it); and every delivery. */
  const fanout: number[] = [];
  const each: number[] = [];
  const steal = stealSampler();
  // Both kinds in one shuffled order: the two medians are taken under the same load of the machine, and each
  // kind follows either kind alike (where a message lands in the poller's cycle depends on when the previous
  // delivery ended).
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
 * returned function is called; undefined where /proc/stat is not there.
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

// ---- 3. Throughput and memory ----------------------------------------------------------------------------

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
  for (const id of Object.keys(rps)) out(`${id.padEnd(32)}${`${rps[id]} req/s`.padStart(12)}   p50 ${latency[id].p50} ms, p99 ${latency[id].p99} ms`);
  out(`\nResident memory (MB)${''.padEnd(13)}${Object.keys(atRest).map((k) => k.padStart(16)).join('')}`);
  out(`${'at rest'.padEnd(33)}${Object.values(atRest).map((v) => String(v).padStart(16)).join('')}`);
  out(`${'under load (peak)'.padEnd(33)}${Object.values(peak).map((v) => String(v).padStart(16)).join('')}`);
  return { rps, load_latency_ms: latency, rss_mb: rss };
}

// ---- 4. Bundles and cold init (this code, and with --before the code of another commit) -------------------

/** The source tree of `ref` (lambdas/, lib/) extracted to a temporary folder, with this checkout's node_modules. */
function checkoutBefore(ref: string): { ref: string; commit: string; dir: string } {
  const rev = spawnSync('git', ['-C', ROOT, 'rev-parse', '--verify', `${ref}^{commit}`], { encoding: 'utf8' });
  if (rev.status !== 0) throw new Error(`--before ${ref}: not a commit of ${ROOT} (${rev.stderr.trim()})`);
  const commit = rev.stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'chat-bench-before-'));
  const paths = ['lambdas', 'lib', 'tsconfig.json', 'package.json'];
  // `git archive | tar -x`: nothing of the repository changes (no worktree, no index, no checkout).
  const archive = spawnSync('sh', ['-c', 'git -C "$1" archive "$2" -- $3 | tar -x -C "$4"', 'sh', ROOT, commit, paths.join(' '), dir], { encoding: 'utf8' });
  if (archive.status !== 0) throw new Error(`--before ${ref}: git archive failed (${archive.stderr.trim()})`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { ref, commit, dir };
}

interface Bundle {
  file: string;
  kb: number;
  mapKb: number;
  /** The largest parts of the bundle: npm package (or `own code`) → KB in the output, largest first. */
  parts: Record<string, number>;
}

/** One function bundled as CDK's NodejsFunction bundles it (lib/bundling.ts of the tree it comes from). */
async function bundle(root: string, entry: string, bundling: BundlingOptions, outdir: string): Promise<Bundle | undefined> {
  if (!existsSync(join(root, entry))) return undefined;
  const file = join(outdir, 'index.js');
  mkdirSync(outdir, { recursive: true });
  const { metafile } = await build({
    entryPoints: [join(root, entry)],
    outfile: file,
    bundle: true,
    platform: 'node',
    target: bundling.target,
    format: 'cjs',
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    mainFields: bundling.mainFields,
    external: bundling.externalModules,
    define: bundling.define,
    loader: bundling.loader as Record<string, Loader> | undefined,
    keepNames: bundling.keepNames,
    banner: bundling.banner ? { js: bundling.banner } : undefined,
    footer: bundling.footer ? { js: bundling.footer } : undefined,
    metafile: true,
    logLevel: 'silent',
  });
  return { file, kb: round(statSync(file).size / 1024), mapKb: existsSync(`${file}.map`) ? round(statSync(`${file}.map`).size / 1024) : 0, parts: composition(metafile) };
}

function composition(metafile: Metafile): Record<string, number> {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint);
  const bytes = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = m ? m[1] : 'own code';
    bytes.set(key, (bytes.get(key) ?? 0) + bytesInOutput);
  }
  return Object.fromEntries(
    [...bytes]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([k, v]) => [k, round(v / 1024)]),
  );
}

/** What one cold start measured. */
interface ColdRun {
  /** Load + first event, ms. */
  ms: number;
  /** Of it, the module load. */
  load: number;
  status?: number;
  /** The reply carries a presigned S3 URL (no request, but the S3 client's signing). */
  presigned?: boolean;
  /** Requests that reached the Secrets Manager and S3 stand-ins during the run. */
  secrets: number;
  s3: number;
}

/**
 * The stand-ins a cold start talks to besides DynamoDB Local: Secrets Manager (GetSecretValue of the JWT secret,
 * as on AWS, where the signing key comes from it), and a pass-through to the S3 emulator. Both count requests,
 * which tells which functions touch either service on their first request.
 */
async function coldStartServices(jwtSecret: string) {
  const hits = { secrets: 0, s3: 0 };
  const secretArn = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench-jwt-AbCdEf';
  const secrets = createServer((req, res) => {
    hits.secrets++;
    req.resume();
    req.on('end', () => {
      const ok = req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue';
      res.writeHead(ok ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(
        JSON.stringify(
          ok
            ? { ARN: secretArn, Name: 'bench-jwt', SecretString: jwtSecret, VersionId: '00000000-0000-0000-0000-000000000001', VersionStages: ['AWSCURRENT'], CreatedDate: 1.7e9 }
            : { __type: 'UnknownOperationException', message: `not served here: ${req.headers['x-amz-target']}` },
        ),
      );
    });
  });
  const s3Target = new URL(process.env.S3_ENDPOINT as string);
  const s3 = createServer((req, res) => {
    hits.s3++;
    // Headers as they came (the Host header is signed).
    const upstream = httpRequest({ host: s3Target.hostname, port: s3Target.port, method: req.method, path: req.url, headers: req.headers as IncomingHttpHeaders }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const listen = (server: ReturnType<typeof createServer>) =>
    new Promise<string>((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));
  const [secretsUrl, s3Url] = [await listen(secrets), await listen(s3)];
  const env = (sourceMaps: boolean): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, JWT_SECRET_ARN: secretArn, SECRETS_MANAGER_ENDPOINT: secretsUrl, S3_ENDPOINT: s3Url };
    delete e.JWT_SECRET_FILE;
    // As every function runs (NODE_OPTIONS in lib/stack.ts), or without, to tell what it costs.
    if (sourceMaps) e.NODE_OPTIONS = '--enable-source-maps';
    else delete e.NODE_OPTIONS;
    return e;
  };
  return {
    /** A fresh Node process loads the bundle and handles `event`; its logs are dropped; a 5xx or a throw fails the run. */
    async coldStart(id: string, file: string, event: unknown, sourceMaps: boolean): Promise<ColdRun> {
      const script =
        `process.stdout.write=()=>true;const t0=performance.now();const m=require(${JSON.stringify(file)});const load=performance.now()-t0;` +
        `m.handler(${JSON.stringify(event)},{awsRequestId:'cold'}).then(r=>{const ms=performance.now()-t0;` +
        `process.stderr.write(JSON.stringify({ms,load,status:r&&r.statusCode,presigned:/X-Amz-Signature=/.test(JSON.stringify(r)||'')})+'\\n');process.exit(0)})`;
      hits.secrets = 0;
      hits.s3 = 0;
      // Not spawnSync: the stack's gateways, queue and the stand-ins live in this process and must keep answering.
      const r = await run(process.execPath, ['-e', script], env(sourceMaps));
      const last = r.stderr.split('\n').find((l) => l.startsWith('{"ms"'));
      const line = (last ? JSON.parse(last) : {}) as Partial<ColdRun>;
      if (line.ms === undefined || line.load === undefined || (line.status ?? 200) >= 500) throw new Error(`cold init of ${id} (${file}): ${r.stderr}`);
      return { ms: line.ms, load: line.load, status: line.status, presigned: line.presigned, ...hits };
    },
    close: () => {
      secrets.close();
      s3.close();
    },
  };
}

async function bundlesAndColdInit(jwtSecret: string, before: { ref: string; commit: string; dir: string } | undefined) {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-bundles-'));
  const beforeBundling: BundlingOptions | undefined = before ? (await import(join(before.dir, 'lib', 'bundling.ts'))).BUNDLING : undefined;
  const now: Record<string, Bundle> = {};
  const old: Record<string, Bundle> = {};
  for (const def of FUNCTIONS) {
    now[def.id] = (await bundle(ROOT, def.entry, BUNDLING, join(outdir, 'after', def.id)))!;
    const b = before && (await bundle(before.dir, def.entry, beforeBundling!, join(outdir, 'before', def.id)));
    if (b) old[def.id] = b;
  }
  const services = await coldStartServices(jwtSecret);
  const runs = quick ? 3 : 5;
  const cold: Record<string, number> = {};
  const load: Record<string, number> = {};
  const loadNoMaps: Record<string, number> = {};
  const coldBefore: Record<string, number> = {};
  const loadBefore: Record<string, number> = {};
  const touches: Record<string, string[]> = {};
  try {
    for (const def of FUNCTIONS) {
      const event = firstEvents.get(def.entry);
      if (event === undefined) throw new Error(`cold init of ${def.id}: the stack never invoked it, no event to replay`);
      const a: ColdRun[] = [];
      const plain: ColdRun[] = [];
      const b: ColdRun[] = [];
      // Interleaved, so that a slower minute of the machine weighs on each variant alike.
      for (let i = 0; i < runs; i++) {
        a.push(await services.coldStart(def.id, now[def.id].file, event, true));
        if (old[def.id]) b.push(await services.coldStart(`${def.id} (before)`, old[def.id].file, event, true));
        plain.push(await services.coldStart(def.id, now[def.id].file, event, false));
      }
      cold[def.id] = round(median(a.map((r) => r.ms)));
      load[def.id] = round(median(a.map((r) => r.load)));
      loadNoMaps[def.id] = round(median(plain.map((r) => r.load)));
      if (b.length) {
        coldBefore[def.id] = round(median(b.map((r) => r.ms)));
        loadBefore[def.id] = round(median(b.map((r) => r.load)));
      }
      touches[def.id] = [...(a.some((r) => r.secrets > 0) ? ['secretsmanager'] : []), ...(a.some((r) => r.s3 > 0 || r.presigned) ? ['s3'] : [])];
      if (process.env.BENCH_VERBOSE) console.error(`cold init ${def.id}: ${a.map((r) => round(r.ms)).join(', ')} ms; before ${b.map((r) => round(r.ms)).join(', ')}`);
    }
  } finally {
    services.close();
    rmSync(outdir, { recursive: true, force: true });
  }
  const kb = Object.fromEntries(FUNCTIONS.map((d) => [d.id, now[d.id].kb]));
  const kbBefore = Object.fromEntries(Object.entries(old).map(([id, b]) => [id, b.kb]));
  const arrow = (id: string, was: Record<string, number>, is: Record<string, number>) => (before ? `${was[id] ?? '-'} → ${is[id]}` : String(is[id]));
  out(
    `\nBundles and cold init per function: a fresh Node process with NODE_OPTIONS=--enable-source-maps (as deployed) loads the bundle and` +
      ` handles the event the function got earlier in this run (median of ${runs}; load = require() alone)` +
      (before ? `; before = ${before.ref} (${before.commit.slice(0, 12)}), measured interleaved with this code` : ''),
  );
  out(
    `${'function'.padEnd(20)}${'first request'.padEnd(22)}${`bundle KB${before ? ' (before → now)' : ''}`.padStart(24)}${`cold init ms${before ? ' (before → now)' : ''}`.padStart(28)}` +
      `${'load ms'.padStart(10)}${'no maps'.padStart(10)}${'target'.padStart(8)}`,
  );
  for (const d of FUNCTIONS) {
    const id = d.id;
    out(
      `${id.padEnd(20)}${(touches[id].join(' + ') || '-').padEnd(22)}${arrow(id, kbBefore, kb).padStart(24)}${arrow(id, coldBefore, cold).padStart(28)}` +
        `${String(load[id]).padStart(10)}${String(loadNoMaps[id]).padStart(10)}${String(coldTarget(touches[id])).padStart(8)}`,
    );
  }
  const heavy = FUNCTIONS.filter((d) => kb[d.id] > BUNDLE_TARGET_KB || cold[d.id] > coldTarget(touches[d.id]));
  if (heavy.length) {
    out(`\nOver target: the largest parts of their bundles (KB in the minified output)`);
    for (const d of heavy) out(`${d.id.padEnd(20)}${Object.entries(now[d.id].parts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  }
  return {
    bundle_kb: kb,
    source_map_kb: Object.fromEntries(FUNCTIONS.map((d) => [d.id, now[d.id].mapKb])),
    cold_init_ms: cold,
    cold_load_ms: load,
    cold_load_no_source_maps_ms: loadNoMaps,
    first_request_touches: touches,
    bundle_parts_kb: Object.fromEntries(FUNCTIONS.map((d) => [d.id, now[d.id].parts])),
    ...(before && {
      before: { ref: before.ref, commit: before.commit },
      bundle_kb_before: kbBefore,
      cold_init_ms_before: coldBefore,
      cold_load_ms_before: loadBefore,
    }),
  };
}

/** A command's stderr once it exits (killed after 30 s). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ stderr: string }> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
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

// ---- 5. Targets --------------------------------------------------------------------------------------------

const BUNDLE_TARGET_KB = 512;
/** Cold init: 200 ms for a function whose first request calls Secrets Manager or S3 (or presigns), else 150. */
const coldTarget = (touches: string[]) => (touches.length ? 200 : 150);

interface Target {
  value: number;
  target: string;
  met: boolean;
}

function checkTargets(r: {
  round_trips: Record<string, number>;
  realtime_ms: { median: number; p99: number; fanout50_median: number };
  bundle_kb: Record<string, number>;
  cold_init_ms: Record<string, number>;
  first_request_touches: Record<string, string[]>;
}): Record<string, Target> {
  const t: Record<string, Target> = {};
  const check = (name: string, value: number, op: '=' | '<=', limit: number, shown = String(limit)) =>
    (t[name] = { value, target: `${op} ${shown}`, met: op === '=' ? value === limit : value <= limit });
  for (const id of ['list_chats', 'create_chat', 'list_messages', 'create_message', 'mark_read']) check(`round_trips.${id}`, r.round_trips[id], '=', 1);
  check('round_trips.create_session_returning', r.round_trips.create_session_returning, '<=', 2);
  check('round_trips.create_session_new', r.round_trips.create_session_new, '<=', 3);
  check('round_trips.publisher_per_message', r.round_trips.publisher_per_message, '=', 1);
  check('round_trips.webhook_dispatcher_per_message', r.round_trips.webhook_dispatcher_per_message, '=', 0);
  const rt = r.realtime_ms;
  check('realtime_ms.median', rt.median, '<=', 60);
  check('realtime_ms.p99', rt.p99, '<=', 200);
  const fanLimit = round(2 * rt.median + 5);
  check('realtime_ms.fanout50_median', rt.fanout50_median, '<=', fanLimit, `2 × median + 5 = ${fanLimit}`);
  for (const [id, kb] of Object.entries(r.bundle_kb)) check(`bundle_kb.${id}`, kb, '<=', BUNDLE_TARGET_KB);
  for (const [id, ms] of Object.entries(r.cold_init_ms)) check(`cold_init_ms.${id}`, ms, '<=', coldTarget(r.first_request_touches[id]));
  const missed = Object.entries(t).filter(([, x]) => !x.met);
  out(`\nTargets: ${Object.keys(t).length - missed.length} of ${Object.keys(t).length} met${missed.length ? '; not met:' : ''}`);
  for (const [name, x] of missed) out(`  ${name}: ${x.value} (target ${x.target})`);
  return t;
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
