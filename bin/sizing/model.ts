// What a stage needs for a peak, computed from the bench's committed results (benchmarks/results.json: units per
// exchange and per conversation, the functions' billed time, the scale block) and AWS's quotas (lib/aws-quotas.ts).
// docs/sizing.md explains each rule; bin/sizing.ts writes the table.
import { AWS_QUOTAS } from '../../lib/aws-quotas';
import { DEFAULT_THROTTLE } from '../../lib/stack-config';
import { PUBLISHER, STREAM_DELIVERY, WEBHOOK_DISPATCHER } from '../../lib/consumers';

/** The parts of benchmarks/results.json the sizing reads. */
export interface BenchResults {
  run: { date: string; commit: string };
  cost: {
    exchange_units: Record<string, number>;
    overhead_units: Record<string, number>;
    exchange_functions: Record<string, { invocations: number; billed_ms: number; stream_records?: number }>;
    /** A conversation's overhead by function (results of a bench before it have none: no visit's records counted). */
    overhead_functions?: Record<string, { stream_records?: number }>;
    usd_per_1m_exchanges: number;
    usd_per_1m_conversations_overhead: number;
  };
  /** A stream shard's throughput per consumer (bin/bench/stream.ts); absent from results of a bench without the stream phase. */
  stream?: Record<'publisher' | 'dispatcher', { records_per_s_per_shard: number; records_per_s_per_shard_at_1_vcpu: number }>;
  /** Absent from results of a bench without the scale phase. */
  scale?: { max_exchanges_per_s_per_bot: number | null; max_sessions_per_s_per_bot: number | null; exchanges_limited_by: string };
}

export interface Peak {
  visitors: number;
  messagesPerSecond: number;
}

/** The peaks of the table: concurrent visitors and messages a second (users' and bots' together). */
export const PEAKS: Peak[] = [
  { visitors: 1_000, messagesPerSecond: 100 },
  { visitors: 10_000, messagesPerSecond: 2_000 },
  { visitors: 50_000, messagesPerSecond: 10_000 },
];

/** Room above the peak in every setting: throttles, warm throughput and raised quotas are twice the need. */
export const HEADROOM = 2;
/**
 * Every open page may reconnect at once (a deploy, a network blip): sessions and new sockets are sized for all
 * visitors within this many seconds, not only for visits' steady arrival.
 */
export const RECONNECT_SECONDS = 60;
/** Lambda's smallest memory among the functions (lib/routes.ts): the overhead's GB-seconds counted at it err high. */
const SMALLEST_GB = 0.25;
/** The stream consumers, by their name in the bench's stream block: their function ids in the cost block. */
const STREAM_CONSUMERS = { publisher: PUBLISHER.id, dispatcher: WEBHOOK_DISPATCHER.id } as const;
type StreamConsumer = keyof typeof STREAM_CONSUMERS;
const STREAM_CONSUMER_NAMES = Object.keys(STREAM_CONSUMERS) as StreamConsumer[];

/** Rounded up to two significant digits (a setting, not a measurement). */
export const roundUp = (n: number) => {
  if (n <= 0) return 0;
  const step = 10 ** Math.max(0, Math.floor(Math.log10(n)) - 1);
  return Math.ceil(n / step) * step;
};

export interface Sizing {
  peak: Peak;
  exchangesPerSecond: number;
  visitsPerSecond: number;
  httpRequestsPerSecond: number;
  wsRequestsPerSecond: number;
  callbacksPerSecond: number;
  stageThrottle: { rateLimit: number; burstLimit: number };
  routeThrottles: Record<string, number>;
  apiGatewayRequestsPerSecond: number;
  lambdaConcurrency: number;
  writeUnitsPerSecond: number;
  readUnitsPerSecond: number;
  warm: { read: number; write: number };
  /** The shards the table's partitions give (warm throughput), or more: as many as the consumers need to keep up. */
  streamShards: number;
  recordsPerShardPerSecond: number;
  /** Records/s the publisher and the dispatcher are given (the exchange's, as the cost block counts them). */
  consumerRecordsPerSecond: { publisher: number; dispatcher: number };
  /** The shards the consumers need at their memory, and with a whole vCPU (1,769 MB); undefined without a stream block. */
  consumerShards?: { asDeployed: number; atOneVcpu: number };
  /** Quotas the peak needs raised: name → the value to ask for. */
  raise: Partial<Record<keyof typeof AWS_QUOTAS, number>>;
  /** undefined: the results have no scale block. */
  oneBotFits: boolean | undefined;
  usdPerHour: number;
}

export function size(r: BenchResults, peak: Peak): Sizing {
  const ex = r.cost.exchange_units;
  const ov = r.cost.overhead_units;
  // An exchange is two messages (the user's and the bot's reply) and a read mark.
  const E = peak.messagesPerSecond / 2;
  // A visitor's conversation lasts the bench's visit (its socket's minutes), then another begins.
  const N = peak.visitors / (ov.websocket_connection_minutes * 60);
  const http = E * ex.http_requests + N * ov.http_requests;
  // A visit's socket: $connect, and its frames (billed in and out: the overhead's messages ÷ 2).
  const ws = N * (1 + ov.websocket_messages / 2);
  // Each publication is a post to the @connections API (a callback request).
  const callbacks = E * ex.websocket_messages;
  const stageRate = Math.max(DEFAULT_THROTTLE.rateLimit, roundUp(Math.max(http, ws) * HEADROOM));
  // The stream consumers, when the bench measured them, are counted below by their records (their billed time in
  // the cost block is one record's batch, not a busy shard's).
  const countedByRecords: string[] = r.stream ? Object.values(STREAM_CONSUMERS) : [];
  const exchangeSeconds = Object.entries(r.cost.exchange_functions).reduce((s, [id, f]) => s + (countedByRecords.includes(id) ? 0 : f.billed_ms / 1000), 0);
  const wcu = E * ex.dynamodb_write_units + N * ov.dynamodb_write_units;
  const rcu = E * ex.dynamodb_read_units + N * ov.dynamodb_read_units;
  const warm = {
    read: Math.max(AWS_QUOTAS.dynamoWarmReadUnitsPerSecond.value, roundUp(rcu * HEADROOM)),
    write: Math.max(AWS_QUOTAS.dynamoWarmWriteUnitsPerSecond.value, roundUp(wcu * HEADROOM)),
  };
  // A stream shard follows a table partition; warm throughput makes at least this many partitions.
  const partitions = Math.ceil(Math.max(warm.write / AWS_QUOTAS.dynamoPartitionWriteUnitsPerSecond.value, warm.read / AWS_QUOTAS.dynamoPartitionReadUnitsPerSecond.value));
  // Each consumer's records: the exchanges' and the visits' (a session, a chat, a socket: whatever passes its
  // filters). It keeps up on a shard up to the bench's records/s (one batch at a time, parallelization 1): more
  // shards, made by more warm write throughput, are what lets the stream keep up beyond that.
  const recordsOf = (id: string) => E * (r.cost.exchange_functions[id]?.stream_records ?? 0) + N * (r.cost.overhead_functions?.[id]?.stream_records ?? 0);
  const records = { publisher: recordsOf(STREAM_CONSUMERS.publisher), dispatcher: recordsOf(STREAM_CONSUMERS.dispatcher) };
  const shardsFor = (perShard: (c: StreamConsumer) => number) => Math.max(...STREAM_CONSUMER_NAMES.map((c) => Math.ceil((records[c] * HEADROOM) / Math.max(1, perShard(c)))));
  const consumerShards = r.stream && {
    asDeployed: shardsFor((c) => r.stream![c].records_per_s_per_shard),
    atOneVcpu: shardsFor((c) => r.stream![c].records_per_s_per_shard_at_1_vcpu),
  };
  const shards = Math.max(partitions, consumerShards?.asDeployed ?? 0);
  // A consumer busy on a shard is one execution: records/s ÷ what a shard takes, per consumer (Little's law).
  const stream = r.stream;
  const consumersBusy = stream ? STREAM_CONSUMER_NAMES.reduce((sum, c) => sum + records[c] / Math.max(1, stream[c].records_per_s_per_shard), 0) : 0;
  const concurrency = E * exchangeSeconds + (N * ov.lambda_gb_seconds) / SMALLEST_GB + consumersBusy;
  warm.write = Math.max(warm.write, roundUp(shards * AWS_QUOTAS.dynamoPartitionWriteUnitsPerSecond.value));
  const apiGateway = http + ws + callbacks;
  const raise: Sizing['raise'] = {};
  const need = (name: keyof typeof AWS_QUOTAS, value: number) => {
    if (value * HEADROOM > AWS_QUOTAS[name].value) raise[name] = roundUp(value * HEADROOM);
  };
  need('apiGatewayRequestsPerSecond', apiGateway);
  const wave = peak.visitors / RECONNECT_SECONDS;
  need('webSocketNewConnectionsPerSecond', wave);
  need('lambdaConcurrentExecutions', concurrency);
  need('dynamoTableReadUnitsPerSecond', rcu);
  need('dynamoTableWriteUnitsPerSecond', Math.max(wcu, warm.write / HEADROOM));
  const maxE = r.scale?.max_exchanges_per_s_per_bot ?? null;
  const maxS = r.scale?.max_sessions_per_s_per_bot ?? null;
  return {
    peak,
    exchangesPerSecond: E,
    visitsPerSecond: N,
    httpRequestsPerSecond: http,
    wsRequestsPerSecond: ws,
    callbacksPerSecond: callbacks,
    stageThrottle: { rateLimit: stageRate, burstLimit: 2 * stageRate },
    routeThrottles: {
      'POST /api/client/session': roundUp(Math.max(wave, N * HEADROOM)),
      $connect: roundUp(Math.max(wave, N * HEADROOM)),
      'POST /api/client/chats/{chat_id}/messages': roundUp(E * HEADROOM),
    },
    apiGatewayRequestsPerSecond: apiGateway,
    lambdaConcurrency: concurrency,
    writeUnitsPerSecond: wcu,
    readUnitsPerSecond: rcu,
    warm,
    streamShards: shards,
    // Stream records are item writes, each at least one write unit: at most the write units a second.
    recordsPerShardPerSecond: wcu / shards,
    consumerRecordsPerSecond: records,
    consumerShards,
    raise,
    oneBotFits: r.scale && (maxE === null || E <= maxE) && (maxS === null || N <= maxS),
    usdPerHour: (3600 * (E * r.cost.usd_per_1m_exchanges + N * r.cost.usd_per_1m_conversations_overhead)) / 1e6,
  };
}

/** The stream consumers' settings the table names (lib/consumers.ts). */
export const CONSUMERS = {
  publisherBatch: PUBLISHER.batchSize,
  dispatcherBatch: WEBHOOK_DISPATCHER.batchSize,
  parallelization: STREAM_DELIVERY.parallelizationFactor,
};
