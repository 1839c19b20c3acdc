// How the cost phase turns what an invocation did locally into what AWS would bill (docs/cost.md
// explains each rule). Pure functions, constants and the cost block's types; cost.ts runs the exchanges.
import type { Invocation } from '../../lib/local/handlers';
import { FUNCTION_MEMORY_MB, LAMBDA_LOGGING, NOT_FOUND, ROUTES, WS_ROUTES, type FunctionDef } from '../../lib/routes';
import { PUBLISHER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER } from '../../lib/consumers';
import { HTTP_ACCESS_LOG_FIELDS } from '../../lib/log-formats';

export const UNIT_KEYS = [
  'http_requests',
  'lambda_invocations',
  'lambda_gb_seconds',
  'dynamodb_write_units',
  'dynamodb_read_units',
  'websocket_messages',
  'sqs_requests',
  'log_bytes',
  'secrets_manager_calls',
] as const;
export type UnitKey = (typeof UNIT_KEYS)[number];
export type Units = Record<UnitKey, number>;
export const zeroUnits = (): Units => Object.fromEntries(UNIT_KEYS.map((k) => [k, 0])) as Units;

const DEFS: FunctionDef[] = [...ROUTES, ...WS_ROUTES, NOT_FOUND, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER];
export const defOf = (entry: string): FunctionDef => {
  const def = DEFS.find((d) => d.entry === entry);
  if (!def) throw new Error(`no function definition has the entry ${entry}`);
  return def;
};

/**
 * Time added to the measured handler time per AWS call, for the latency on AWS that the local emulators do
 * not have (the local call's own time is already in the measurement): in-region DynamoDB answers in a few
 * ms; SQS, S3 and Secrets Manager in about 10 ms; a post to the @connections API in about 15 ms; the webhook
 * POST goes over the internet to the bot's server (a TLS handshake on a cold connection).
 */
export const ALLOWANCE_MS = { dynamodb: 5, sqs: 10, s3: 10, secrets: 10, connections: 15, outbound: 100 };

/**
 * The AWS latency an invocation waits for beyond its measured time: its calls' allowances along the longest chain
 * of calls in which each started after the one before it had ended (it may have waited for that answer). Calls
 * in flight together wait side by side on AWS as here, so the later of them adds only its own allowance beyond
 * what came before it; calls made one after another add up. A call never seen to end counts as ending with the
 * invocation.
 */
export function allowanceMs(inv: Invocation): number {
  const end = inv.endedAt ?? Infinity;
  const spans = spansByStart(inv);
  // Per call: the allowances waited for up to its answer on AWS (the longest chain ending with it).
  const upTo: number[] = [];
  spans.forEach((span, i) => {
    let before = 0;
    for (let j = 0; j < i; j++) if ((spans[j].endedAt ?? end) <= span.startedAt) before = Math.max(before, upTo[j]);
    const own = ALLOWANCE_MS[span.service as keyof typeof ALLOWANCE_MS];
    if (own === undefined) throw new Error(`no latency allowance for a call to ${span.service}`);
    upTo.push(before + own);
  });
  return Math.max(0, ...upTo);
}

/** An invocation's calls, in the order they started. */
const spansByStart = (inv: Invocation) => [...(inv.spans ?? [])].sort((a, b) => a.startedAt - b.startedAt);

/** How long an invocation had at least one call in flight (a call never seen to end: until the invocation ended). */
export function inFlightMs(inv: Invocation): number {
  const end = inv.endedAt ?? inv.startedAt;
  let [total, reached] = [0, -Infinity];
  for (const span of spansByStart(inv)) {
    const [from, to] = [Math.max(span.startedAt, reached), span.endedAt ?? end];
    if (to > from) total += to - from;
    reached = Math.max(reached, to);
  }
  return total;
}

/** The billed duration of one invocation: measured time plus the allowances it waits for, rounded up to the ms (Lambda's unit). */
export function billedMs(inv: Invocation): number {
  const measured = (inv.endedAt ?? inv.startedAt) - inv.startedAt;
  return Math.max(1, Math.ceil(measured + allowanceMs(inv)));
}

/** Lambda gives a function a share of a vCPU in proportion to its memory: a whole one at 1,769 MB. */
export const VCPU_MEMORY_MB = 1769;

/**
 * A stream batch's time on AWS. Its users' lanes run side by side but on the function's one thread, so the batch
 * waits for all their CPU (`cpuMs`, on a whole core) on its share of a vCPU (`cpuScale` times as long), plus what
 * one lane's calls wait for on AWS (`allowanceMs`; the others' waits overlap with that CPU).
 */
export const streamBatchMs = (o: { cpuMs: number; cpuScale: number; allowanceMs: number }): number => o.cpuMs * o.cpuScale + o.allowanceMs;

/**
 * The GB-seconds an invocation's CPU time would add on AWS, where it runs on its memory's share of a vCPU
 * rather than on a whole core as here: (VCPU_MEMORY_MB / memory - 1) times as long again, at its memory.
 * Not in the bill above (the measured time is): a bound of what the model leaves out, from cpuMs, itself an
 * upper bound of the handler's own CPU.
 */
export function cpuShareGbSeconds(inv: Invocation): number {
  const mb = memoryGb(defOf(inv.entry)) * 1024;
  return mb >= VCPU_MEMORY_MB ? 0 : ((inv.cpuMs ?? 0) / 1000) * ((VCPU_MEMORY_MB - mb) / 1024);
}

/** CloudWatch Logs counts 26 bytes per log event besides its text (PutLogEvents' accounting; assumed billed). */
export const LOG_EVENT_OVERHEAD_BYTES = 26;

/**
 * The lines Lambda itself writes per invocation with the stack's logging settings: in text format START, END
 * and REPORT; in JSON format the platform records, none of them at a system log level of WARN.
 */
export function platformLogBytes(memoryMb: number, billed: number): number {
  const id = '00000000-0000-0000-0000-000000000000'.length;
  if (LAMBDA_LOGGING.format === 'JSON') {
    if (LAMBDA_LOGGING.systemLogLevel === 'WARN') return 0;
    // platform.start and platform.report, as JSON records (their typical length).
    return 110 + id + (230 + id) + 2 * LOG_EVENT_OVERHEAD_BYTES;
  }
  const start = `START RequestId: ${'x'.repeat(id)} Version: $LATEST\n`;
  const end = `END RequestId: ${'x'.repeat(id)}\n`;
  const report = `REPORT RequestId: ${'x'.repeat(id)}\tDuration: ${billed.toFixed(2)} ms\tBilled Duration: ${billed} ms\tMemory Size: ${memoryMb} MB\tMax Memory Used: 99 MB\t\n`;
  return start.length + end.length + report.length + 3 * LOG_EVENT_OVERHEAD_BYTES;
}

/** One HTTP API access log line in the stack's format, for a request of `routeKey`. */
export function accessLogBytes(routeKey: string): number {
  const sample: Record<string, string> = {
    '$context.requestId': 'AbCdEfGhIjKlMnO=',
    '$context.identity.sourceIp': '203.0.113.200',
    '$context.requestTime': '25/Nov/2026:10:00:00 +0000',
    '$context.routeKey': routeKey,
    '$context.status': '201',
    '$context.responseLength': '456',
    '$context.responseLatency': '25',
    '$context.integration.requestId': '00000000-0000-0000-0000-000000000000',
    '$context.integrationErrorMessage': '-',
  };
  const line = JSON.stringify(Object.fromEntries(Object.entries(HTTP_ACCESS_LOG_FIELDS).map(([k, v]) => [k, sample[v] ?? v])));
  return line.length + 1 + LOG_EVENT_OVERHEAD_BYTES;
}

/** The memory a function is deployed with (lib/routes.ts), in GB. */
export const memoryGb = (def: FunctionDef) => (def.memorySize ?? FUNCTION_MEMORY_MB) / 1024;

/** USD for `units` at `prices`. */
export function usdOf(units: Partial<Record<string, number>>, prices: Record<string, number>): number {
  return Object.entries(units).reduce((sum, [k, n]) => sum + (n ?? 0) * (prices[k] ?? 0), 0);
}

// The cost block's parts (cost.ts fills them).

export interface FunctionCost {
  invocations: number;
  /** The stream records its invocations were given (a stream consumer's; 0 for the others). */
  stream_records: number;
  billed_ms: number;
  gb_seconds: number;
  dynamodb_write_units: number;
  dynamodb_read_units: number;
  /** The process's CPU time while it ran (an upper bound of its own: Invocation.cpuMs), and the GB-seconds it would add on AWS. */
  cpu_ms: number;
  cpu_share_gb_seconds: number;
}

/**
 * What a stream position costs (lambdas/entities/channel-stream.ts): the units the exchanges' commands spent on
 * channels' positions and histories, per publication positioned, and their share of an exchange's bill. Already
 * in the exchange's units; a history item is deleted by TTL (no unit) after history_ttl_hours.
 */
export interface PositionCost {
  publications_per_exchange: number;
  write_units_per_publication: number;
  read_units_per_publication: number;
  history_ttl_hours: number;
  usd_per_1m_exchanges: number;
}

/**
 * The exchange's price per million with the stream consumers (`consumers`, per exchange) at a whole vCPU (1,769 MB,
 * the stage's `streamConsumerMemorySize`), where stream.ts's records_per_s_per_shard_at_1_vcpu holds: their billed
 * times here are a whole core's already, so only their GB-seconds change.
 */
export function usdWithConsumersAtOneVcpu(usdPer1m: number, consumers: FunctionCost[], gbSecondPrice: number): number {
  const more = consumers.reduce((gb, f) => gb + (f.billed_ms / 1000) * (VCPU_MEMORY_MB / 1024) - f.gb_seconds, 0);
  return Math.round((usdPer1m + more * gbSecondPrice * 1e6) * 100) / 100;
}

/** What the bill leaves out: the exchange's CPU time on its functions' share of a vCPU (cost-model.ts cpuShareGbSeconds). */
export interface CpuShareBound {
  cpu_ms_per_exchange: number;
  gb_seconds_per_exchange: number;
  usd_per_1m_exchanges: number;
}
