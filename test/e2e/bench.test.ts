// `npm run bench -- --quick --json` keeps working and its round-trip targets hold (counts, not times:
// timings are reported by the benchmark and judged in its `targets`, never asserted in a test). One cold start
// per function and variant (`--cold-runs 1`, 3 in a quick run): the cold starts were two thirds of the run, and
// the test needs each figure there, not a median of it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/local-process';
import type { ColdInitFigures } from '../../bin/bench/cold-init';
import type { CostFigures } from '../../bin/bench/cost';
import type { UnitKey } from '../../bin/bench/cost-model';
import type { RealtimeFigures } from '../../bin/bench/realtime';
import type { RoundTripFigures } from '../../bin/bench/round-trips';
import type { ScaleFigures } from '../../bin/bench/scale';
import type { StreamFigures } from '../../bin/bench/stream';
import { TABLE_SCHEMA } from '../../lib/table-schema';
import type { Target } from '../../bin/bench/targets';
import type { ThroughputFigures } from '../../bin/bench/throughput';
import { DEFAULT_CHAT_LIST_SHARDS } from '../../lambdas/shared/config';

/** What `--json` prints (bin/bench/main.ts): every phase's figures, the machine's, and the targets judged. */
type BenchResult = RoundTripFigures &
  ThroughputFigures &
  ColdInitFigures & {
    machine: { nproc: number; cpu: string; node: string; platform: string };
    quick: boolean;
    cost: CostFigures;
    scale: ScaleFigures;
    stream: StreamFigures;
    realtime_ms: RealtimeFigures;
    cpu_steal_pct: number | undefined;
    targets: Record<string, Target>;
  };

// A guard against a hung run, not a time target: the quick run takes about 80 s alone and up to four times that
// while the rest of the suite shares the two cores.
const bench = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bin', 'bench', 'main.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 400_000 });

test('the quick benchmark prints one JSON object with every figure, and writes it where --out says; round trips meet their targets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-out-'));
  const run = bench('--quick', '--json', '--cold-runs', '1', '--out', join(dir, 'results.json'));
  // A failed run shows why (its last lines of stderr), not only its exit status.
  expect({ status: run.status, signal: run.signal, stderr: run.status === 0 ? '' : run.stderr.split('\n').slice(-30).join('\n') }).toEqual({ status: 0, signal: null, stderr: '' });
  const saved = readFileSync(join(dir, 'results.json'), 'utf8');
  rmSync(dir, { recursive: true, force: true });
  const result = JSON.parse(run.stdout.trim().split('\n').pop() as string) as BenchResult;
  // The results file (committed after a full run): the same figures, when and on what commit, no machine path.
  expect(JSON.parse(saved) as unknown).toEqual({ run: { date: expect.any(String), commit: expect.stringMatching(/^[0-9a-f]{7,}$/), uncommitted_changes: expect.any(Boolean) }, ...result });
  expect([ROOT, tmpdir(), dir].filter((path) => saved.includes(path))).toEqual([]);
  for (const key of ['round_trips', 'capacity_units', 'stream', 'realtime_ms', 'bundle_kb', 'client_package_gzip_kb', 'cold_init_ms', 'cold_load_ms', 'cold_load_no_source_maps_ms', 'first_request_touches', 'rps', 'rss_mb', 'targets']) {
    expect(result).toHaveProperty(key);
  }
  expect(result).not.toHaveProperty('overhead_ratio');
  expect(result.machine).toEqual({ nproc: expect.any(Number), cpu: expect.any(String), node: process.version, platform: expect.any(String) });
  expect(result.realtime_ms).toEqual({
    median: expect.any(Number),
    p99: expect.any(Number),
    fanout50_median: expect.any(Number),
    fanout50_p99: expect.any(Number),
    fanout50_each_median: expect.any(Number),
    messages: 50,
    cpu_steal_pct: expect.any(Number),
  });
  expect(result.cpu_steal_pct).toEqual(expect.any(Number));
  const rt = result.round_trips;
  // Each with the erasure check (one GetItem): beside the read of a reader, before the write of a writer.
  for (const id of ['list_chats', 'create_chat', 'list_messages', 'mark_read', 'bot_create_message']) expect({ [id]: rt[id] }).toEqual({ [id]: 2 });
  // A client send without a transaction: the chat read (with the erasure check, one BatchGetItem) and the put
  // (the rate counter is off in the benchmark).
  expect(rt.create_message).toBe(2);
  expect(rt.create_session_returning).toBeLessThanOrEqual(2);
  expect(rt.create_session_new).toBeLessThanOrEqual(3);
  // Each request's units split as AWS bills them: the reads write nothing, an answer writes its message (under 1 KB).
  expect([Object.keys(result.read_units), Object.keys(result.write_units)]).toEqual([Object.keys(rt), Object.keys(rt)]);
  const reads = ['list_chats', 'list_messages', 'bot_list_chats', 'bot_list_messages', 'get_file', 'bot_find_user', 'bot_get_user', 'bot_get_task'];
  expect(Object.fromEntries(reads.map((id) => [id, result.write_units[id]]))).toEqual(Object.fromEntries(reads.map((id) => [id, 0])));
  for (const id of reads) expect({ [id]: result.read_units[id] > 0 }).toEqual({ [id]: true });
  expect(result.write_units.answer_message).toBe(1);
  // The Bot API's chat list: a Query of each shard, sent together, then the page's chats and their users (a
  // BatchGetItem each); the legacy partition is not read once the table is at the current layout (its marker).
  expect(rt.bot_list_chats).toBe(DEFAULT_CHAT_LIST_SHARDS + 2);
  // The Query of the channel's sockets (which reads the publisher's hold and the channel's stream position with
  // them), then the chat's counter and activity, then the position: the history item and the offset. A batch
  // reads nothing for holds or positions.
  expect(rt.publisher_per_message).toBe(4);
  // Bot settings cached, and no hold: the dispatcher makes no DynamoDB call for a message.
  expect(rt.webhook_dispatcher_per_message).toBe(0);
  // An unread reminder: scheduled by the chat read, the reminder's put and a delayed job on the bot's webhook lane
  // (the bot's slow mark read once its 5 s cache is cold: the quick run's one burst is a new bot's first); fired
  // by the claim, the chat and user read (one BatchGet), the Query of its replies and the record of those it
  // carries (so each reply is in one reminder). A reply with reminders off costs nothing more.
  const burst = result.reminder.dispatcher_per_burst;
  expect([burst.round_trips, burst.read_units]).toEqual(burst.round_trips === 3 ? [3, 1.5] : [2, 1]);
  expect(result.reminder).toEqual({
    dispatcher_per_burst: { round_trips: burst.round_trips, read_units: burst.read_units, write_units: 1, sqs_requests: 1 },
    deliverer_per_reminder: { round_trips: 4, read_units: expect.any(Number), write_units: 2, sqs_requests: 0 },
    dispatcher_invocations_per_reply_reminders_off: 0,
  });
  // The benchmark judges the same counts in its targets (and every timing there, which this test only lists).
  for (const [name, t] of Object.entries(result.targets)) {
    // A scale figure is null when no key is shared by the bot's conversations (no per-bot limit to reach).
    const value = name.startsWith('scale.') && t.value === null ? null : expect.any(Number);
    expect({ [name]: t }).toEqual({ [name]: { value, target: expect.any(String), met: expect.any(Boolean) } });
    if (name.startsWith('round_trips.')) expect({ [name]: t.met }).toEqual({ [name]: true });
  }
  for (const key of ['realtime_ms.median', 'realtime_ms.p99', 'realtime_ms.fanout50_median']) expect(result.targets).toHaveProperty([key]);
  // The stream consumers' modelled shard throughput (bin/bench/stream.ts), judged against 1,000 records/s.
  for (const key of ['stream.publisher_records_per_s_per_shard', 'stream.dispatcher_records_per_s_per_shard']) expect(result.targets).toHaveProperty([key]);
  // Its parts add up (cost-model.ts streamBatchMs): all the batch's CPU, measured in a process of its own, on the
  // function's share of a vCPU, plus one lane's waits; a whole vCPU takes at least as many records.
  for (const c of [result.stream.publisher, result.stream.dispatcher]) {
    expect(c.batch_cpu_ms).toBeGreaterThan(0);
    // Measured warm: the child ran more records before the batch than the batch has (stream-child.ts warmRounds).
    expect(c.warm_records).toBeGreaterThan(result.stream.batch_size);
    const modelled = c.batch_cpu_ms * c.cpu_scale + c.allowance_ms;
    // Up to the rounding of what the JSON shows: batch_cpu_ms to the ms (× cpu_scale), cpu_scale to 0.01, the others to the ms.
    expect(Math.abs(c.batch_ms - modelled)).toBeLessThanOrEqual(0.5 * c.cpu_scale + 0.005 * c.batch_cpu_ms + 1);
    expect(c.records_per_s_per_shard_at_1_vcpu).toBeGreaterThanOrEqual(c.records_per_s_per_shard);
  }
  // Every function is bundled and cold-started (with the event it got from the stack).
  expect(Object.keys(result.bundle_kb).length).toBeGreaterThanOrEqual(19);
  const functions = Object.keys(result.bundle_kb).sort();
  expect(Object.keys(result.cold_init_ms).sort()).toEqual(functions);
  // The load is part of the cold init.
  for (const id of functions) expect({ [id]: result.cold_load_ms[id] }).toEqual({ [id]: expect.any(Number) });
  for (const [id, ms] of Object.entries(result.cold_init_ms)) expect(result.cold_load_ms[id]).toBeLessThanOrEqual(ms);
  for (const id of functions) expect({ [id]: result.cold_load_no_source_maps_ms[id] }).toEqual({ [id]: expect.any(Number) });
  for (const id of functions) {
    expect(result.targets).toHaveProperty([`bundle_kb.${id}`]);
    expect(result.targets).toHaveProperty([`cold_init_ms.${id}`]);
  }
  // What each function's replayed first request touched: the session functions fetch the JWT secret from
  // Secrets Manager, the uploads put to S3, a bot API read neither.
  expect(result.first_request_touches.create_session).toContain('secretsmanager');
  expect(result.first_request_touches.upload_file).toEqual(['secretsmanager', 's3']);
  expect(result.first_request_touches.bot_list_chats).toEqual([]);
  // Without --before there is no before/after comparison.
  expect(result).not.toHaveProperty('bundle_kb_before');
  expect(result.rps).toEqual({ list_chats: expect.any(Number), create_message: expect.any(Number) });
  // The cost phase: every unit AWS bills, per exchange and per conversation, priced from the dated table.
  const { cost } = result;
  const units: UnitKey[] = ['http_requests', 'lambda_invocations', 'lambda_gb_seconds', 'dynamodb_write_units', 'dynamodb_read_units', 'websocket_messages', 'sqs_requests', 'log_bytes', 'secrets_manager_calls'];
  expect(Object.keys(cost.exchange_units).sort()).toEqual([...units].sort());
  for (const u of units) expect({ [u]: cost.overhead_units[u] }).toEqual({ [u]: expect.any(Number) });
  expect(cost.exchanges).toBeGreaterThanOrEqual(12);
  // Counts fixed by the exchange itself: three requests (send, reply, read) and three publications on one socket.
  expect(cost.exchange_units.http_requests).toBe(3);
  expect(cost.exchange_units.websocket_messages).toBe(3);
  expect(cost.exchange_units.dynamodb_write_units).toBeGreaterThan(0);
  expect(cost.exchange_units.log_bytes).toBeGreaterThan(0);
  expect(cost.prices).toMatchObject({ as_of: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), region: 'us-east-1', architecture: 'arm64', http_requests: 1e-6 });
  expect(cost.usd_per_1m_exchanges).toBeGreaterThan(0);
  expect(cost.usd_per_1m_conversations_overhead).toBeGreaterThan(0);
  // Reported beside the bill, not in it: the exchange's CPU time run on its functions' share of a vCPU (a whole
  // one at 1,769 MB), each function at 256 or 512 MB.
  // Subscribed recoverable (the client package): a stream position per publication (message, reply, read action),
  // the history item's put and the position's update, no read. A plain subscription's exchange writes none.
  expect(cost.position).toEqual({ publications_per_exchange: 3, write_units_per_publication: 2, read_units_per_publication: 0, history_ttl_hours: 24, usd_per_1m_exchanges: expect.any(Number) });
  expect(cost.recoverable.exchanges).toBe(cost.exchanges);
  expect(cost.recoverable.exchange_units.dynamodb_write_units - cost.exchange_units.dynamodb_write_units).toBeCloseTo(3 * 2, 1);
  expect(cost.recoverable.usd_per_1m_exchanges).toBeGreaterThan(cost.usd_per_1m_exchanges);
  const bound = cost.cpu_share_bound;
  expect(bound).toEqual({ cpu_ms_per_exchange: expect.any(Number), gb_seconds_per_exchange: expect.any(Number), usd_per_1m_exchanges: expect.any(Number) });
  expect(bound.cpu_ms_per_exchange).toBeGreaterThan(0);
  expect(bound.gb_seconds_per_exchange).toBeGreaterThanOrEqual(((bound.cpu_ms_per_exchange / 1000) * (1769 - 512)) / 1024 - 1e-5);
  expect(bound.gb_seconds_per_exchange).toBeLessThanOrEqual(((bound.cpu_ms_per_exchange / 1000) * (1769 - 256)) / 1024 + 1e-5);
  expect(result.targets['cost.usd_per_1m_exchanges']).toMatchObject({ value: cost.usd_per_1m_exchanges, target: '<= 14' });
  // What the stream's throughput at a whole vCPU would cost: the publisher's and the dispatcher's billed time at
  // 1,769 MB instead of their own memory, the rest of the exchange as it is.
  // A visit by function (the sizing counts its stream records): each of its requests and frames once.
  for (const id of ['create_session', 'list_chats', 'create_chat', 'list_messages', 'ws_connect', 'ws_default', 'ws_disconnect']) {
    expect({ [id]: cost.overhead_functions[id]?.invocations }).toEqual({ [id]: 1 });
  }
  const consumerGbSeconds = ['publisher', 'webhook_dispatcher'].map((id) => cost.exchange_functions[id]).reduce((gb, f) => gb + (f.billed_ms / 1000) * (1769 / 1024) - f.gb_seconds, 0);
  expect(cost.usd_per_1m_exchanges_consumers_at_1_vcpu).toBeGreaterThan(cost.usd_per_1m_exchanges);
  expect(cost.usd_per_1m_exchanges_consumers_at_1_vcpu).toBeCloseTo(cost.usd_per_1m_exchanges + consumerGbSeconds * Number(cost.prices.lambda_gb_seconds) * 1e6, 1);
  // An idle page's socket-hour: without the keepalive it reconnects at each 10-minute idle timeout (a $connect, the
  // connect and subscribe frame, the page's catch-up read of its chat, a $disconnect, with their DynamoDB units);
  // with it, 7 keepalives (every 9 minutes)
  // of one invocation, one message and no DynamoDB call each.
  const idle = cost.idle_socket_hour;
  expect(idle).toMatchObject({ reconnects_per_hour: 6, keepalives_per_hour: 7, websocket_connection_minutes: 60 });
  expect(idle.keepalive_units).toMatchObject({ lambda_invocations: 1, websocket_messages: 1, dynamodb_write_units: 0, dynamodb_read_units: 0, http_requests: 0 });
  expect(idle.reconnect_units).toMatchObject({ lambda_invocations: 4, websocket_messages: 2, http_requests: 1 });
  expect(idle.reconnect_units.dynamodb_write_units).toBeGreaterThan(0);
  expect(idle.with_keepalive_usd).toBeLessThan(idle.without_keepalive_usd);
  expect(result.targets['cost.idle_socket_hour.ratio']).toEqual({ value: idle.ratio, target: '<= 1/3', met: idle.ratio <= 0.333 });
  // The scale block: for one bot's 64 conversations, the hottest key value they share on the table and on each
  // index, per exchange and per session, and the rates that take it to DynamoDB's per-key limits.
  const { scale } = result;
  expect(scale.conversations).toBe(64);
  const targets = ['table', ...TABLE_SCHEMA.globalSecondaryIndexes.map((i) => i.indexName)].sort();
  for (const w of [scale.per_exchange, scale.per_session_new, scale.per_session_returning, scale.per_typing]) {
    expect(Object.keys(w.keys).sort()).toEqual(targets);
    for (const k of Object.values(w.keys).flatMap((x) => [x.write, x.read])) if (k) expect(k).toEqual({ key: expect.stringMatching(/^[A-Z]/), units: expect.any(Number), key_values: expect.any(Number), max_units: expect.any(Number) });
  }
  // Each exchange writes to some index (the chat list's entry moves), so a key limits it.
  expect(scale.max_exchanges_per_s_per_bot).toEqual(expect.any(Number));
  // A typing event writes its own conversation's keys only; a shared key it reads (the bot, when a function's
  // cache is cold) leaves room for at least as many as exchanges.
  expect(Object.values(scale.per_typing.keys).map((k) => k.write)).toEqual(Object.values(scale.per_typing.keys).map(() => null));
  if (scale.max_typing_per_s_per_bot !== null) expect(scale.max_typing_per_s_per_bot).toBeGreaterThanOrEqual(5000);
  // Units of the keys the code writes, not timings: the targets hold on any machine.
  expect(result.targets['scale.max_exchanges_per_s_per_bot']).toMatchObject({ value: scale.max_exchanges_per_s_per_bot, target: '>= 5000', met: true });
  expect(result.targets['scale.max_sessions_per_s_per_bot']).toMatchObject({ value: scale.max_sessions_per_s_per_bot, target: '>= 10000', met: true });
  expect(result.rss_mb.at_rest.total).toBeGreaterThan(0);
  expect(result.rss_mb.under_load.total).toBeGreaterThan(0);
}, 420_000);

// The before/after comparison (`--before <git-ref>`) is checked before anything starts: a ref that names no
// commit fails the run at once.
test('--before with a ref that names no commit fails before the stack starts', () => {
  const run = bench('--quick', '--json', '--before', 'no-such-ref-of-this-repository');
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('--before no-such-ref-of-this-repository: not a commit');
  expect(run.stdout).toBe('');
});

test('--cold-runs takes a whole number of at least 1, checked before the stack starts', () => {
  const run = bench('--quick', '--json', '--cold-runs', '0');
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('--cold-runs needs a whole number of at least 1, not 0');
  expect(run.stdout).toBe('');
});
