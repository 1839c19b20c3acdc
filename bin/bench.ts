// `npm run bench [-- --quick] [-- --json]`: measures a fresh local stack (started in this process, so every
// DynamoDB call of every handler invocation is counted by an SDK middleware): round trips and consumed
// capacity per endpoint, realtime delivery latency, bundle sizes and cold init. See BENCHMARKS.md.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import WebSocket from 'ws';
import { Centrifuge } from 'centrifuge';
import { stackPortsEnv } from '../lib/local/ports';
import { invocationObservers, invocations, type Invocation } from '../lib/local/handlers';
import { NOT_FOUND, PUBLISHER, ROUTES, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WS_ROUTES, type FunctionDef } from '../lib/routes';
import { BUNDLING, ESBUILD_ALIAS } from '../lib/bundling';

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
  try {
    const results = {
      machine: `${process.platform} ${process.arch}, Node ${process.version}`,
      quick,
      ...(await roundTrips(stack.apiUrl, stack.demoBot)),
      realtime_ms: await realtime(stack.apiUrl, stack.demoBot.client_key),
      ...(await bundles(stack.apiUrl, stack.demoBot.client_key, stack.demoBot.secret_key)),
    };
    if (asJson) console.log(JSON.stringify(results));
  } finally {
    await stack.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---- 1. DynamoDB round trips and capacity per invocation ------------------------------------------------

/** The last DynamoDB command each handler module sent, to replay it bare (handler overhead). */
const lastCommand = new Map<string, { name: string; input: Record<string, unknown> }>();

async function installCounter(): Promise<Invocation[]> {
  const { dynamo } = await import('../lambdas/core/aws');
  dynamo().middlewareStack.add(
    (next, context) => async (args) => {
      const inv = invocations.getStore();
      if (inv) {
        lastCommand.set(inv.entry, { name: String(context.commandName), input: structuredClone(args.input as Record<string, unknown>) });
        (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      }
      const result = await next(args);
      if (inv) {
        inv.counters.calls = (inv.counters.calls ?? 0) + 1;
        const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
        for (const c of ([] as { CapacityUnits?: number }[]).concat((consumed as never) ?? [])) {
          inv.counters.capacity = (inv.counters.capacity ?? 0) + (c.CapacityUnits ?? 0);
        }
      }
      return result;
    },
    { step: 'initialize', name: 'benchRoundTrips' },
  );
  const seen: Invocation[] = [];
  invocationObservers.push((inv) => seen.push(inv));
  return seen;
}

async function roundTrips(apiUrl: string, demo: { client_key: string; secret_key: string }) {
  const seen = await installCounter();
  const runs = quick ? 3 : 7;
  const http = async (method: string, path: string, opts: { token?: string; json?: unknown; form?: FormData; bot?: boolean } = {}) => {
    const headers: Record<string, string> = {};
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.bot) headers.authorization = `Bearer ${demo.secret_key}`;
    if (opts.json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(apiUrl + path, { method, headers, body: opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined) });
    const body = (await res.json()) as any;
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
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
      calls.push(inv?.counters.calls ?? 0);
      capacity.push(inv?.counters.capacity ?? 0);
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
  // The publisher, per message (the sockets above are subscribers of this channel).
  const published = await measure(PUBLISHER.entry, async () => {
    seen.length = 0;
    await http('POST', `/api/client/chats/${chat.id}/messages`, { token, json: { content: 'fan-out' } });
    for (let i = 0; i < 200 && !seen.some((x) => x.entry === PUBLISHER.entry); i++) await new Promise((r) => setTimeout(r, 10));
  });
  record('publisher_per_message', published);
  for (const ws of sockets) ws.close();

  const overhead = await handlerOverhead(http, entry, { token, chatId: chat.id });

  out('\nDynamoDB round trips and consumed capacity units per request (median, bot settings cached)');
  out(`${'endpoint'.padEnd(28)}${'round trips'.padStart(12)}${'capacity'.padStart(10)}`);
  for (const k of Object.keys(trips)) out(`${k.padEnd(28)}${String(trips[k]).padStart(12)}${String(units[k]).padStart(10)}`);
  return { round_trips: trips, capacity_units: units, ...overhead };
}

// ---- 2. Handler overhead: the endpoint through the local HTTP gateway vs the bare DynamoDB call it makes --

async function handlerOverhead(
  http: (method: string, path: string, opts?: { token?: string; json?: unknown }) => Promise<unknown>,
  entry: (id: string) => string,
  ctx: { token: string; chatId: string },
) {
  const lib = await import('@aws-sdk/lib-dynamodb');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const bare = lib.DynamoDBDocumentClient.from(new DynamoDBClient({ region: process.env.AWS_REGION, endpoint: process.env.DYNAMODB_ENDPOINT }));
  const commands = lib as unknown as Record<string, new (input: unknown) => never>;
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
  for (const [id, request] of cases) {
    await request();
    const through: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < samples; i++) {
      // Interleaved: the endpoint, then the very command it sent, replayed on a client of our own (a write
      // replayed may now fail its condition: still one round trip of the same size).
      let t = performance.now();
      await request();
      through.push(performance.now() - t);
      const cmd = lastCommand.get(entry(id));
      if (!cmd) continue;
      // The middleware sees the low-level command name and the document-client input.
      const docName: Record<string, string> = {
        TransactWriteItemsCommand: 'TransactWriteCommand',
        GetItemCommand: 'GetCommand',
        PutItemCommand: 'PutCommand',
        UpdateItemCommand: 'UpdateCommand',
        DeleteItemCommand: 'DeleteCommand',
        BatchGetItemCommand: 'BatchGetCommand',
        QueryCommand: 'QueryCommand',
      };
      const Ctor = commands[docName[cmd.name] ?? cmd.name];
      if (!Ctor) throw new Error(`no command ${cmd.name}: ${JSON.stringify(cmd.input).slice(0, 200)}`);
      t = performance.now();
      await bare.send(new Ctor(structuredClone(cmd.input))).catch(() => undefined);
      direct.push(performance.now() - t);
    }
    ratio[id] = round(median(through) / median(direct), 2);
    latency[id] = { median: round(median(through)), p99: round(p99(through)), bare_median: round(median(direct)) };
  }
  bare.destroy();
  out('\nHandler overhead: endpoint through the local HTTP gateway vs its bare DynamoDB call (ms, interleaved)');
  out(`${'endpoint'.padEnd(28)}${'median'.padStart(8)}${'p99'.padStart(8)}${'bare'.padStart(8)}${'ratio'.padStart(8)}`);
  for (const id of Object.keys(ratio)) {
    const l = latency[id];
    out(`${id.padEnd(28)}${String(l.median).padStart(8)}${String(l.p99).padStart(8)}${String(l.bare_median).padStart(8)}${String(ratio[id]).padStart(8)}`);
  }
  return { overhead_ratio: ratio, latency_ms: latency };
}

// ---- 3. Realtime delivery --------------------------------------------------------------------------------

async function realtime(apiUrl: string, clientKey: string) {
  const post = async (path: string, json: unknown, token?: string) => {
    const res = await fetch(apiUrl + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(json),
    });
    return (await res.json()) as any;
  };
  const session = await post('/api/client/session', { client_key: clientKey, external_id: 'bench-realtime' });
  const token = session.session_token;
  const chat = await post('/api/client/chats', { name: 'latency' }, token);
  const connect = async () => {
    const client = new Centrifuge(session.realtime.url, { token: session.realtime.token, websocket: WebSocket as never });
    const sub = client.newSubscription(session.realtime.channel);
    const arrivals = new Map<string, number>();
    sub.on('publication', (ctx) => arrivals.set((ctx.data as any).data?.id, performance.now()));
    const ready = new Promise((r) => sub.once('subscribed', r));
    sub.subscribe();
    client.connect();
    await ready;
    return { client, arrivals };
  };
  const waitFor = async (arrivals: Map<string, number>[], id: string) => {
    for (let i = 0; i < 500 && !arrivals.every((a) => a.has(id)); i++) await new Promise((r) => setTimeout(r, 2));
  };
  const measureWith = async (clients: { arrivals: Map<string, number> }[], count: number) => {
    const delays: number[] = [];
    for (let i = 0; i < count; i++) {
      const sent = await post(`/api/client/chats/${chat.id}/messages`, { content: `m${i}` }, token);
      const returned = performance.now();
      await waitFor(clients.map((c) => c.arrivals), sent.id);
      delays.push(Math.max(...clients.map((c) => (c.arrivals.get(sent.id) ?? NaN) - returned)));
    }
    return delays;
  };
  const one = await connect();
  const single = await measureWith([one], quick ? 50 : 200);
  const many = [one, ...(await Promise.all(Array.from({ length: 49 }, connect)))];
  const fanout = await measureWith(many, quick ? 10 : 40);
  for (const c of many) c.client.disconnect();
  const result = { median: round(median(single)), p99: round(p99(single)), fanout50_median: round(median(fanout)), messages: single.length };
  out(`\nRealtime delivery, POST returned → publication (${single.length} messages): median ${result.median} ms, p99 ${result.p99} ms; 50 subscribers, slowest of them: median ${result.fanout50_median} ms`);
  return result;
}

// ---- 4. Bundles and cold init ----------------------------------------------------------------------------

async function bundles(apiUrl: string, clientKey: string, secretKey: string) {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-bundles-'));
  const defs: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, NOT_FOUND];
  const kb: Record<string, number> = {};
  const cold: Record<string, number> = {};
  const session = (await (await fetch(`${apiUrl}/api/client/session`, { method: 'POST', body: JSON.stringify({ client_key: clientKey, external_id: 'bench-cold' }) })).json()) as any;
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
      alias: ESBUILD_ALIAS,
      logLevel: 'silent',
    });
    kb[def.id] = round(statSync(file).size / 1024);
  }
  // Cold init: a fresh Node process loads the bundle and serves its first request (median of 5).
  const coldCases: Record<string, unknown> = {
    list_chats: { routeKey: 'GET /api/client/chats', rawPath: '/api/client/chats', headers: { authorization: `Bearer ${session.session_token}` }, requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' } } },
    create_session: { routeKey: 'POST /api/client/session', rawPath: '/api/client/session', headers: {}, body: JSON.stringify({ client_key: clientKey, external_id: 'bench-cold' }), requestContext: { http: { method: 'POST', sourceIp: '127.0.0.1' } } },
    bot_list_chats: { routeKey: 'GET /api/bot/chats', rawPath: '/api/bot/chats', headers: { authorization: `Bearer ${secretKey}` }, requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' } } },
  };
  for (const [id, event] of Object.entries(coldCases)) {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const script = `const t0=performance.now();const m=require(${JSON.stringify(join(outdir, id, 'index.js'))});m.handler(${JSON.stringify(event)}).then(r=>{console.log(JSON.stringify({ms:performance.now()-t0,status:r.statusCode}))})`;
      const r = spawnSync(process.execPath, ['-e', script], { env: process.env, encoding: 'utf8' });
      const line = JSON.parse(r.stdout.trim().split('\n').pop() || '{}');
      if (line.status !== 200) throw new Error(`cold init of ${id}: status ${line.status} ${r.stderr}`);
      times.push(line.ms);
    }
    cold[id] = round(median(times));
  }
  rmSync(outdir, { recursive: true, force: true });
  out('\nBundles (minified, AWS SDK inside) and cold init (fresh process: load + first request, median of 5)');
  for (const id of Object.keys(kb)) out(`${id.padEnd(28)}${`${kb[id]} KB`.padStart(12)}${cold[id] !== undefined ? `${cold[id]} ms`.padStart(12) : ''}`);
  return { bundle_kb: kb, cold_init_ms: cold };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
