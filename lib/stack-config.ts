// The stack's settings in one place: their type, defaults and checks, and the CDK context keys that set them
// (`cdk synth --context stage=staging --context realtime=false`), read by bin/app.ts and bin/deploy.ts.
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CORS } from './routes';
import { DEFAULT_MAX_UPLOAD_BYTES, maxUploadProblem, storageQuotaProblem } from '../lambdas/shared/config';

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
  /** Origins the HTTP API (CORS preflight) and the files bucket (presigned GETs) answer; `*` = any. */
  corsOrigins: string[];
  /** API Gateway stage throttling, for both APIs (requests per second, burst). */
  throttle: { rateLimit: number; burstLimit: number };
  /** Days kept in every log group (functions, API access logs) and in the S3 access-log bucket. */
  logRetentionDays: number;
  /** `retain` keeps what holds data (table, with deletion protection; buckets; dead-letter queues; JWT secret) when the stack is deleted; `destroy` deletes it. */
  removalPolicy: 'retain' | 'destroy';
  /** Memory of every function, MB (CPU grows with it). */
  /** MB of every function; unset, each function gets its own (lib/routes.ts FunctionDef.memorySize). */
  memorySize?: number;
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
  /** Abuse limits, by their environment variable (docs/api.md "Limits"); 0 turns one off, unset ones keep the defaults. */
  limits: Partial<Record<LimitVariable, number>>;
}

export const DEFAULT_THROTTLE = { rateLimit: 200, burstLimit: 400 };

export const DEFAULT_CONFIG: StackConfig = {
  stage: 'dev',
  realtime: true,
  corsOrigins: CORS.allowOrigins,
  throttle: DEFAULT_THROTTLE,
  logRetentionDays: RetentionDays.ONE_MONTH,
  removalPolicy: 'retain',
  architecture: 'arm64',
  tracing: false,
  wsAccessLogs: false,
  botCacheTtlMs: 30_000,
  limits: {},
};

export const stackName = (stage: string) => `ChatBot-${stage}`;

/** Context keys: one per setting, except throttling (two keys); `limits` is `NAME=value,NAME=value`. */
export const CONTEXT_KEYS = [
  'stage',
  'realtime',
  'corsOrigins',
  'throttleRate',
  'throttleBurst',
  'logRetentionDays',
  'removalPolicy',
  'memorySize',
  'architecture',
  'tracing',
  'wsAccessLogs',
  'alarmEmail',
  'alarmTopicArn',
  'botCacheTtlMs',
  'limits',
] as const;
export type ContextKey = (typeof CONTEXT_KEYS)[number];
export const BOOLEAN_KEYS: ContextKey[] = ['realtime', 'tracing', 'wsAccessLogs'];

const RETENTION_DAYS = Object.values(RetentionDays).filter((v): v is number => typeof v === 'number');
const STAGE = /^[a-z][a-z0-9-]{0,20}$/;
const ORIGIN = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/;

/**
 * One config per stage named by the context (`stage=staging`, or `stage=staging,prod` for stacks side by
 * side with the same settings). Every key is checked; a plain-word key we do not know is a typo and fails.
 */
export function configsFromContext(context: Record<string, unknown>): StackConfig[] {
  const unknown = Object.keys(context).filter((k) => /^[A-Za-z]+$/.test(k) && !(CONTEXT_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new Error(`unknown context key ${unknown.join(', ')}; known keys: ${CONTEXT_KEYS.join(', ')}`);
  const get = (key: ContextKey): string | undefined => {
    const v = context[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'object') return Array.isArray(v) ? v.join(',') : JSON.stringify(v);
    // Context values are JSON: what is left is a string, a number or a boolean (written as JSON writes it).
    return typeof v === 'string' ? v.trim() : JSON.stringify(v);
  };
  const bool = (key: ContextKey) => {
    const v = get(key);
    if (v === undefined) return undefined;
    if (v !== 'true' && v !== 'false') throw new Error(`context ${key} must be true or false, not "${v}"`);
    return v === 'true';
  };
  const int = (key: ContextKey) => {
    const v = get(key);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new Error(`context ${key} must be a whole number, not "${v}"`);
    return Number(v);
  };
  const list = (key: ContextKey) => get(key)?.split(',').map((s) => s.trim()).filter(Boolean);

  const shared: Partial<StackConfig> = {
    realtime: bool('realtime'),
    corsOrigins: list('corsOrigins'),
    logRetentionDays: int('logRetentionDays'),
    removalPolicy: get('removalPolicy') as StackConfig['removalPolicy'] | undefined,
    memorySize: int('memorySize'),
    architecture: get('architecture') as StackConfig['architecture'] | undefined,
    tracing: bool('tracing'),
    wsAccessLogs: bool('wsAccessLogs'),
    alarmEmail: get('alarmEmail') || undefined,
    alarmTopicArn: get('alarmTopicArn') || undefined,
    botCacheTtlMs: int('botCacheTtlMs'),
    limits: parseLimits(get('limits')),
  };
  const rate = int('throttleRate');
  const burst = int('throttleBurst');
  if (rate !== undefined || burst !== undefined) {
    shared.throttle = { rateLimit: rate ?? DEFAULT_THROTTLE.rateLimit, burstLimit: burst ?? DEFAULT_THROTTLE.burstLimit };
  }
  const stages = list('stage') ?? [DEFAULT_CONFIG.stage];
  if (!stages.length) throw new Error('context stage is empty');
  if (new Set(stages).size !== stages.length) throw new Error(`context stage names a stage twice: "${stages.join(',')}"`);
  return stages.map((stage) => resolveConfig({ ...shared, stage }));
}

function parseLimits(value: string | undefined): StackConfig['limits'] | undefined {
  if (value === undefined || value === '') return undefined;
  const limits: StackConfig['limits'] = {};
  for (const pair of value.split(',')) {
    const m = /^\s*([A-Z_]+)=(\d+)\s*$/.exec(pair);
    if (!m) throw new Error(`context limits must be NAME=number pairs separated by commas, not "${pair}"`);
    limits[m[1] as LimitVariable] = Number(m[2]);
  }
  return limits;
}

/** Defaults filled in, then every setting checked; the stack calls this on its props too. */
export function resolveConfig(given: Partial<StackConfig>): StackConfig {
  // Only our settings (the stack passes all its props, env and description included), and only those given.
  const fields = [...Object.keys(DEFAULT_CONFIG), 'memorySize', 'alarmEmail', 'alarmTopicArn'];
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
  const { rateLimit, burstLimit } = c.throttle;
  if (!(Number.isInteger(rateLimit) && rateLimit > 0)) fail(`throttle rate must be a whole number of requests per second above 0: ${rateLimit}`);
  if (!(Number.isInteger(burstLimit) && burstLimit > 0)) fail(`throttle burst must be a whole number above 0: ${burstLimit}`);
  if (!RETENTION_DAYS.includes(c.logRetentionDays)) {
    fail(`logRetentionDays must be one of CloudWatch's values ${RETENTION_DAYS.join(', ')} (9999 = forever): ${c.logRetentionDays}`);
  }
  if (c.removalPolicy !== 'retain' && c.removalPolicy !== 'destroy') fail(`removalPolicy must be retain or destroy: "${c.removalPolicy as string}"`);
  if (c.memorySize !== undefined && !(Number.isInteger(c.memorySize) && c.memorySize >= 128 && c.memorySize <= 10240)) {
    fail(`memorySize must be a whole number of MB from 128 to 10240: ${c.memorySize}`);
  }
  if (c.architecture !== 'arm64' && c.architecture !== 'x86_64') fail(`architecture must be arm64 or x86_64: "${c.architecture as string}"`);
  if (c.alarmEmail !== undefined && !/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/.test(c.alarmEmail)) fail(`alarmEmail is not an email address: "${c.alarmEmail}"`);
  if (c.alarmTopicArn !== undefined && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]{1,256}$/.test(c.alarmTopicArn)) {
    fail(`alarmTopicArn is not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>): "${c.alarmTopicArn}"`);
  }
  if (c.alarmEmail && c.alarmTopicArn) fail('give alarmEmail or alarmTopicArn, not both (subscribe the address to your topic instead)');
  if (!(Number.isInteger(c.botCacheTtlMs) && c.botCacheTtlMs >= 0)) fail(`botCacheTtlMs must be a whole number of ms, 0 or more: ${c.botCacheTtlMs}`);
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
