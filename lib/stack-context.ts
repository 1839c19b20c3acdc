// The CDK context read into stack settings (`cdk synth --context stage=staging --context realtime=false`), for
// bin/app.ts and bin/deploy.ts: each key parsed as its type, then the settings checked (stack-config.ts).
import { CONTEXT_KEYS, DEFAULT_CONFIG, DEFAULT_THROTTLE, MIN_WARM_THROUGHPUT, resolveConfig, type ContextKey, type LimitVariable, type StackConfig } from './stack-config';

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
    webHosting: bool('webHosting'),
    corsOrigins: list('corsOrigins'),
    logRetentionDays: int('logRetentionDays'),
    removalPolicy: get('removalPolicy') as StackConfig['removalPolicy'] | undefined,
    memorySize: int('memorySize'),
    streamConsumerMemorySize: int('streamConsumerMemorySize'),
    architecture: get('architecture') as StackConfig['architecture'] | undefined,
    tracing: bool('tracing'),
    wsAccessLogs: bool('wsAccessLogs'),
    alarmEmail: get('alarmEmail') || undefined,
    alarmTopicArn: get('alarmTopicArn') || undefined,
    botCacheTtlMs: int('botCacheTtlMs'),
    chatListShards: int('chatListShards'),
    limits: parseLimits(get('limits')),
    streamBatchSize: int('streamBatchSize'),
    streamBatchingWindowSeconds: int('streamBatchingWindowSeconds'),
    webhookConcurrency: int('webhookConcurrency'),
    webhookSlowConcurrency: int('webhookSlowConcurrency'),
    routeThrottles: parseRouteThrottles(get('routeThrottles')),
  };
  const warmRead = int('warmReadUnits');
  const warmWrite = int('warmWriteUnits');
  if (warmRead !== undefined || warmWrite !== undefined) {
    shared.warmThroughput = { readUnitsPerSecond: warmRead ?? MIN_WARM_THROUGHPUT.readUnitsPerSecond, writeUnitsPerSecond: warmWrite ?? MIN_WARM_THROUGHPUT.writeUnitsPerSecond };
  }
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

function parseRouteThrottles(value: string | undefined): StackConfig['routeThrottles'] | undefined {
  if (value === undefined || value === '') return undefined;
  const throttles: StackConfig['routeThrottles'] = {};
  for (const pair of value.split(',')) {
    const m = /^\s*(.+?)=(\d+)\/(\d+)\s*$/.exec(pair);
    if (!m) throw new Error(`context routeThrottles must be ROUTE KEY=rate/burst pairs separated by commas, not "${pair}"`);
    throttles[m[1]] = { rateLimit: Number(m[2]), burstLimit: Number(m[3]) };
  }
  return throttles;
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
