// The stack's settings in one place: their type, defaults and checks, and the CDK context keys that set them
// (`cdk synth --context stage=staging --context realtime=false`), which lib/stack-context.ts reads.
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CORS, ROUTES, WS_ROUTES } from './routes';
import { AWS_QUOTAS } from './aws-quotas';
import { STREAM_BATCH_SIZE, WEBHOOK_CONCURRENCY } from './consumers';
import { DEFAULT_CHAT_LIST_SHARDS, DEFAULT_MAX_UPLOAD_BYTES, maxUploadProblem, storageQuotaProblem } from '../lambdas/shared/config';

export const LIMIT_VARIABLES = [
  'RATE_MESSAGES_PER_MINUTE',
  'RATE_UPLOADS_PER_MINUTE',
  'RATE_CHATS_PER_MINUTE',
  'RATE_READS_PER_MINUTE',
  'RATE_SESSIONS_PER_IP_PER_MINUTE',
  'MAX_CHATS_PER_USER',
  'MAX_UPLOAD_BYTES',
  'MAX_SOCKETS_PER_USER',
  'RATE_SOCKET_COMMANDS_PER_MINUTE',
  'MAX_OPEN_UPLOAD_BYTES',
  'MAX_UPLOAD_BYTES_PER_DAY',
  'UNSENT_FILE_TTL_SECONDS',
] as const;
export type LimitVariable = (typeof LIMIT_VARIABLES)[number];

export interface StackConfig {
  /** Names the stack (`ChatBot-<stage>`); its resources take generated names under it. */
  stage: string;
  /** WebSocket API + stream publisher. Off: no realtime block, HTTP only. */
  realtime: boolean;
  /** The chat page and widget.js hosted by the stack (S3 + CloudFront, lib/stack-web.ts). Off: host them yourself. */
  webHosting: boolean;
  /** Origins the HTTP API (CORS preflight) and the files bucket (presigned GETs) answer; `*` = any. */
  corsOrigins: string[];
  /** API Gateway stage throttling, for both APIs (requests per second, burst). */
  throttle: Throttle;
  /**
   * Throttles of single routes, by route key of either API (`POST /api/client/session`, `$connect`): each
   * replaces the stage's for its route (API Gateway route settings), so one route's flood cannot take the
   * stage's whole rate (docs/sizing.md).
   */
  routeThrottles: Record<string, Throttle>;
  /**
   * The table's warm throughput: read and write units per second it serves at once, before on-demand scaling
   * (DynamoDB pre-splits partitions for it). Unset: the table's own (4,000 writes and 12,000 reads at least).
   */
  warmThroughput?: { readUnitsPerSecond: number; writeUnitsPerSecond: number };
  /** Days kept in every log group (functions, API access logs) and in the S3 access-log bucket. */
  logRetentionDays: number;
  /** `retain` keeps what holds data (table, with deletion protection; buckets; dead-letter queues; JWT secret) when the stack is deleted; `destroy` deletes it. */
  removalPolicy: 'retain' | 'destroy';
  /** Memory of every function, MB (CPU grows with it). */
  /** MB of every function; unset, each function gets its own (lib/routes.ts FunctionDef.memorySize). */
  memorySize?: number;
  /**
   * MB of the stream consumers (publisher, webhook dispatcher), over memorySize: their CPU per record bounds a
   * shard's throughput, and Lambda's CPU share grows with memory up to a whole vCPU at 1,769 MB (docs/sizing.md).
   */
  streamConsumerMemorySize?: number;
  architecture: 'arm64' | 'x86_64';
  /** Lambda active tracing (X-Ray). API Gateway HTTP and WebSocket APIs cannot trace. */
  tracing: boolean;
  /** WebSocket stage access logs: need the account's API Gateway CloudWatch role (docs/deploy.md). */
  wsAccessLogs: boolean;
  /** Alarms notify a new SNS topic with this address subscribed... */
  alarmEmail?: string;
  /** ...or this existing topic. Neither: alarms only show in the console. */
  alarmTopicArn?: string;
  /** How long handlers cache bot settings (ms); 0 turns the cache off. */
  botCacheTtlMs: number;
  /**
   * Write shards of each bot's chat list (the Bot API's list by activity, docs/scale.md "Hot keys"): more
   * spreads a busy bot's messages over more index keys, and makes each list page read more. A change on a stage
   * with chats needs the data move (docs/configuration.md).
   */
  chatListShards: number;
  /** Abuse limits, by their environment variable (docs/api.md "Limits"); 0 turns one off, unset ones keep the defaults. */
  limits: Partial<Record<LimitVariable, number>>;
  /**
   * Records per invocation of each stream consumer (publisher, webhook dispatcher), 1 to 10,000: a batch's users
   * wait on AWS side by side (docs/scale.md "Stream consumers").
   */
  streamBatchSize: number;
  /** Seconds a stream consumer may wait to fill a batch (0 to 300); 0: a batch goes as soon as records are read. */
  streamBatchingWindowSeconds: number;
  /** Webhook deliverer invocations at once on the webhook queue (SQS event source maximum concurrency, 2–1000). */
  webhookConcurrency: number;
  /** The same on the slow lane's queue, where the jobs of bots whose receiver timed out go (2–1000). */
  webhookSlowConcurrency: number;
}

export interface Throttle {
  rateLimit: number;
  burstLimit: number;
}

export const DEFAULT_THROTTLE: Throttle = { rateLimit: 200, burstLimit: 400 };
/** Every route key a route throttle may name: the HTTP API's routes and the WebSocket API's. */
export const ROUTE_KEYS = [...ROUTES.map((r) => `${r.method} ${r.path}`), ...WS_ROUTES.map((r) => r.routeKey)];
/** The least warm throughput DynamoDB gives an on-demand table (a setting below it changes nothing). */
export const MIN_WARM_THROUGHPUT = { readUnitsPerSecond: AWS_QUOTAS.dynamoWarmReadUnitsPerSecond.value, writeUnitsPerSecond: AWS_QUOTAS.dynamoWarmWriteUnitsPerSecond.value };

export const DEFAULT_CONFIG: StackConfig = {
  stage: 'dev',
  realtime: true,
  webHosting: true,
  corsOrigins: CORS.allowOrigins,
  throttle: DEFAULT_THROTTLE,
  routeThrottles: {},
  logRetentionDays: RetentionDays.ONE_MONTH,
  removalPolicy: 'retain',
  architecture: 'arm64',
  tracing: false,
  wsAccessLogs: false,
  botCacheTtlMs: 30_000,
  chatListShards: DEFAULT_CHAT_LIST_SHARDS,
  limits: {},
  streamBatchSize: STREAM_BATCH_SIZE,
  streamBatchingWindowSeconds: 0,
  webhookConcurrency: WEBHOOK_CONCURRENCY.fast,
  webhookSlowConcurrency: WEBHOOK_CONCURRENCY.slow,
};

export const stackName = (stage: string) => `ChatBot-${stage}`;

/**
 * Context keys: one per setting, except throttling and warm throughput (two keys each); `limits` is
 * `NAME=value,NAME=value`; `routeThrottles` is `ROUTE KEY=rate/burst,...`.
 */
export const CONTEXT_KEYS = [
  'stage',
  'realtime',
  'webHosting',
  'corsOrigins',
  'throttleRate',
  'throttleBurst',
  'routeThrottles',
  'warmReadUnits',
  'warmWriteUnits',
  'logRetentionDays',
  'removalPolicy',
  'memorySize',
  'streamConsumerMemorySize',
  'architecture',
  'tracing',
  'wsAccessLogs',
  'alarmEmail',
  'alarmTopicArn',
  'botCacheTtlMs',
  'chatListShards',
  'limits',
  'streamBatchSize',
  'streamBatchingWindowSeconds',
  'webhookConcurrency',
  'webhookSlowConcurrency',
] as const;
export type ContextKey = (typeof CONTEXT_KEYS)[number];
export const BOOLEAN_KEYS: ContextKey[] = ['realtime', 'webHosting', 'tracing', 'wsAccessLogs'];

/** Each list page queries every shard at once: past this, a page is more Queries than a function should send. */
export const MAX_CHAT_LIST_SHARDS = 1000;
const RETENTION_DAYS = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
const STAGE = /^[a-z][a-z0-9-]{0,20}$/;
const ORIGIN = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/;

/** Defaults filled in, then every setting checked; the stack calls this on its props too. */
export function resolveConfig(given: Partial<StackConfig>): StackConfig {
  // Only our settings (the stack passes all its props, env and description included), and only those given.
  const fields = [...Object.keys(DEFAULT_CONFIG), 'memorySize', 'streamConsumerMemorySize', 'alarmEmail', 'alarmTopicArn', 'warmThroughput'];
  const defined = Object.fromEntries(Object.entries(given).filter(([k, v]) => v !== undefined && fields.includes(k)));
  const c: StackConfig = { ...DEFAULT_CONFIG, ...defined };
  const fail = (message: string): never => {
    throw new Error(message);
  };
  if (!STAGE.test(c.stage)) fail(`stage must be 1-21 lower-case letters, digits and dashes, starting with a letter: "${c.stage}"`);
  if (!c.corsOrigins.length) fail('corsOrigins is empty (use * for any origin)');
  for (const o of c.corsOrigins) {
    if (o !== '*' && !ORIGIN.test(o)) fail(`corsOrigins: "${o}" is not * or an origin like https://shop.example (scheme and host, no path)`);
  }
  if (c.corsOrigins.includes('*') && c.corsOrigins.length > 1) fail('corsOrigins: * already allows every origin; list origins or *');
  const checkThrottle = ({ rateLimit, burstLimit }: Throttle, what: string) => {
    if (!(Number.isInteger(rateLimit) && rateLimit > 0)) fail(`${what} rate must be a whole number of requests per second above 0: ${rateLimit}`);
    if (!(Number.isInteger(burstLimit) && burstLimit > 0)) fail(`${what} burst must be a whole number above 0: ${burstLimit}`);
  };
  checkThrottle(c.throttle, 'throttle');
  for (const [key, t] of Object.entries(c.routeThrottles)) {
    if (!ROUTE_KEYS.includes(key)) fail(`routeThrottles: no route has the key "${key}"; route keys: ${ROUTE_KEYS.join(', ')}`);
    checkThrottle(t, `routeThrottles ${key}:`);
  }
  if (c.warmThroughput) {
    for (const k of ['readUnitsPerSecond', 'writeUnitsPerSecond'] as const) {
      const v = c.warmThroughput[k];
      const least = MIN_WARM_THROUGHPUT[k];
      if (!(Number.isInteger(v) && v >= least)) fail(`warm throughput ${k === 'readUnitsPerSecond' ? 'warmReadUnits' : 'warmWriteUnits'} must be a whole number of units per second of at least ${least} (an on-demand table's own): ${v}`);
    }
  }
  if (!RETENTION_DAYS.includes(c.logRetentionDays)) {
    fail(`logRetentionDays must be one of CloudWatch's values ${RETENTION_DAYS.join(', ')} (9999 = forever): ${c.logRetentionDays}`);
  }
  if (c.removalPolicy !== 'retain' && c.removalPolicy !== 'destroy') fail(`removalPolicy must be retain or destroy: "${c.removalPolicy as string}"`);
  for (const key of ['memorySize', 'streamConsumerMemorySize'] as const) {
    const mb = c[key];
    if (mb !== undefined && !(Number.isInteger(mb) && mb >= 128 && mb <= 10240)) fail(`${key} must be a whole number of MB from 128 to 10240: ${mb}`);
  }
  if (c.architecture !== 'arm64' && c.architecture !== 'x86_64') fail(`architecture must be arm64 or x86_64: "${c.architecture as string}"`);
  if (c.alarmEmail !== undefined && !/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(c.alarmEmail)) fail(`alarmEmail is not an email address: "${c.alarmEmail}"`);
  if (c.alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/.test(c.alarmTopicArn)) {
    fail(`alarmTopicArn is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>): "${c.alarmTopicArn}"`);
  }
  if (c.alarmEmail && c.alarmTopicArn) fail('give alarmEmail or alarmTopicArn, not both (subscribe the address to your topic instead)');
  if (!(Number.isInteger(c.botCacheTtlMs) && c.botCacheTtlMs >= 0)) fail(`botCacheTtlMs must be a whole number of ms, 0 or more: ${c.botCacheTtlMs}`);
  if (!(Number.isInteger(c.chatListShards) && c.chatListShards >= 1 && c.chatListShards <= MAX_CHAT_LIST_SHARDS)) {
    fail(`chatListShards must be a whole number from 1 to ${MAX_CHAT_LIST_SHARDS}: ${c.chatListShards}`);
  }
  if (!(Number.isInteger(c.streamBatchSize) && c.streamBatchSize >= 1 && c.streamBatchSize <= 10_000)) {
    fail(`streamBatchSize must be a whole number of records from 1 to 10000: ${c.streamBatchSize}`);
  }
  const window = c.streamBatchingWindowSeconds;
  if (!(Number.isInteger(window) && window >= 0 && window <= 300)) fail(`streamBatchingWindowSeconds must be a whole number of seconds from 0 to 300: ${window}`);
  for (const key of ['webhookConcurrency', 'webhookSlowConcurrency'] as const) {
    const { min, max } = WEBHOOK_CONCURRENCY;
    if (!(Number.isInteger(c[key]) && c[key] >= min && c[key] <= max)) fail(`${key} must be a whole number from ${min} to ${max} (SQS event source maximum concurrency): ${c[key]}`);
  }
  for (const [name, value] of Object.entries(c.limits)) {
    if (!(LIMIT_VARIABLES as readonly string[]).includes(name)) fail(`limits: unknown limit ${name}; known: ${LIMIT_VARIABLES.join(', ')}`);
    if (!(Number.isInteger(value) && value >= 0)) fail(`limits: ${name} must be a whole number, 0 (off) or more: ${value}`);
  }
  // The largest direct upload cannot be off, nor more than S3's largest single POST.
  const maxUpload = c.limits.MAX_UPLOAD_BYTES;
  const problem = maxUpload === undefined ? undefined : maxUploadProblem(maxUpload);
  if (problem) fail(`limits: ${problem}`);
  for (const name of ['MAX_OPEN_UPLOAD_BYTES', 'MAX_UPLOAD_BYTES_PER_DAY'] as const) {
    const quota = c.limits[name];
    const quotaProblem = quota === undefined ? undefined : storageQuotaProblem(name, quota, maxUpload ?? DEFAULT_MAX_UPLOAD_BYTES);
    if (quotaProblem) fail(`limits: ${quotaProblem}`);
  }
  return c;
}
