// Configuration from the environment, read once per cold start; the only place in lambdas/ that reads process.env.

export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`Missing required environment variable ${name}`);
  return value;
}

function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`Environment variable ${name} must be a non-negative integer`);
  return n;
}

/**
 * The task worker stops between steps once less than this is left of its invocation and queues the rest
 * (flows/erase.ts, retention-task.ts); its near-timeout alarm is set past it (lib/stack-alarms.ts).
 */
export const TASK_TIME_MARGIN_MS = 30_000;

/** Write shards of a bot's chat list unless CHAT_LIST_SHARDS says otherwise (docs/scale.md "Hot keys"). */
export const DEFAULT_CHAT_LIST_SHARDS = 32;

/** The largest direct upload unless MAX_UPLOAD_BYTES says otherwise: 100 MB. */
export const DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

/** S3's largest object in one POST (or PUT): 5 GiB. */
const MAX_UPLOAD_CEILING = 5 * 1024 ** 3;

/** What is wrong with a largest direct upload of `n` bytes, if anything: the functions' check and the stack's (lib/stack-config.ts). */
export function maxUploadProblem(n: number): string | undefined {
  return n >= 1 && n <= MAX_UPLOAD_CEILING ? undefined : `MAX_UPLOAD_BYTES must be from 1 to ${MAX_UPLOAD_CEILING} (S3's 5 GB for one POST): ${n}`;
}

function maxUploadBytes(): number {
  const n = intEnv('MAX_UPLOAD_BYTES', DEFAULT_MAX_UPLOAD_BYTES);
  const problem = maxUploadProblem(n);
  if (problem) throw new Error(problem);
  return n;
}

/**
 * What is wrong with a storage quota of `n` bytes (MAX_OPEN_UPLOAD_BYTES, MAX_UPLOAD_BYTES_PER_DAY), if anything:
 * off (0), or room for at least one largest direct upload. The functions' check and the stack's.
 */
export function storageQuotaProblem(name: string, n: number, maxUpload: number): string | undefined {
  return n === 0 || n >= maxUpload ? undefined : `${name} must be 0 (off) or at least MAX_UPLOAD_BYTES (${maxUpload}), room for one largest upload: ${n}`;
}

/** A storage quota from the environment; by default `times` largest uploads. */
function storageQuota(name: string, times: number, maxUpload: number): number {
  const n = intEnv(name, times * maxUpload);
  const problem = storageQuotaProblem(name, n, maxUpload);
  if (problem) throw new Error(problem);
  return n;
}

function delaysEnv(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const list = raw.split(',').map((x) => Number(x.trim()));
  // SQS delays are whole seconds, at most 15 minutes.
  if (list.some((n) => !Number.isInteger(n) || n < 0 || n > 900)) throw new Error(`${name} must list whole seconds (0-900)`);
  return list;
}

/**
 * WEBHOOK_ALLOW_LOOPBACK (local stack only): webhooks may go to http(s)://localhost and 127.0.0.1 (loopback only;
 * private ranges stay refused). A function on Lambda refuses to start with it, so no deployed stage can turn it on.
 */
function webhookAllowLoopback(): boolean {
  const raw = (process.env.WEBHOOK_ALLOW_LOOPBACK ?? '').toLowerCase();
  if (!['', 'on', 'off', 'true', 'false', '1', '0'].includes(raw)) throw new Error(`WEBHOOK_ALLOW_LOOPBACK must be on or off, got "${raw}"`);
  const on = ['on', 'true', '1'].includes(raw);
  if (on && process.env.AWS_LAMBDA_FUNCTION_NAME) throw new Error('WEBHOOK_ALLOW_LOOPBACK is for the local stack only; a deployed function refuses it');
  return on;
}

export interface Config {
  tableName: string;
  /** Required by the handlers that touch files; the bot CLI runs without it. */
  bucketName?: string;
  region: string;
  /** Set locally (DynamoDB Local / S3 emulator); absent on AWS. */
  dynamodbEndpoint?: string;
  s3Endpoint?: string;
  /** Tests only: a stand-in for Secrets Manager (AWS itself is the default). */
  secretsManagerEndpoint?: string;
  /** Where the JWT signing key comes from: Secrets Manager on AWS, a file locally. */
  jwtSecretArn?: string;
  jwtSecretFile?: string;
  /** WebSocket URL handed out in the session's realtime block; absent when realtime is off. */
  realtimeUrl?: string;
  /** Endpoint of the WebSocket API's @connections management API (the publisher posts through it). */
  wsManagementEndpoint?: string;
  /** SQS queue of webhook deliveries, and where deliveries that keep failing end up. */
  webhookQueueUrl?: string;
  /** The slow lane's queue: deliveries of bots marked slow (flows/webhook-lanes.ts). */
  webhookSlowQueueUrl?: string;
  /** How long a webhook timeout keeps its bot in the slow lane, seconds (each timeout starts it again). */
  webhookSlowSeconds: number;
  /** A socket's keepalive goes unmetered at most once this often, ms (centrifuge/keepalive.ts). */
  keepaliveFreeEveryMs: number;
  /** The Bot API's background tasks (erase, export). */
  taskQueueUrl?: string;
  /**
   * The stream consumers' FIFO redo queues, where a user's records go once one keeps failing (flows/stream-redo.ts);
   * unset, such a record is left to the stream's own retry.
   */
  publisherRedoQueueUrl?: string;
  dispatcherRedoQueueUrl?: string;
  /** How long an erase job waits for requests that passed their checks before the DELETE (flows/erase.ts). */
  eraseDelaySeconds: number;
  webhookDlqUrl?: string;
  /** Set locally (the local SQS stand-in); absent on AWS. */
  sqsEndpoint?: string;
  webhookTimeoutMs: number;
  /** Webhooks may go to loopback (http or https): the local stack's setting, refused on Lambda. */
  webhookAllowLoopback: boolean;
  /** How long one attempt of an AWS call may take before it is retried or, after the last, given up (503). */
  awsRequestTimeoutMs: number;
  /** How long a fetched JWT signing secret is used before Secrets Manager is asked again (rotation). */
  jwtSecretMaxAgeSeconds: number;
  /** Delay before each retry of a failed webhook (seconds); its length bounds the retries. */
  webhookRetryDelays: number[];
  botCacheTtlMs: number;
  /** Write shards of each bot's chat list (gsi2); a change moves chats between shards (flows/migrate.ts). */
  chatListShards: number;
  /** Items the data move (flows/migrate.ts) reads per step: one Scan page, its moves, then its cursor saved. */
  migratePageItems: number;
  /** Pages one run of the move does before it queues its rest (0: as many as its time allows): paces its load. */
  migratePagesPerRun: number;
  /** Abuse limits (docs/api.md "Limits"); 0 turns one off. */
  limits: {
    messagesPerMinute: number;
    uploadsPerMinute: number;
    chatsPerMinute: number;
    /** GET chats, history and file status together, per user. */
    readsPerMinute: number;
    sessionsPerIpPerMinute: number;
    chatsPerUser: number;
    /** Open sockets per user; past it the oldest are closed (docs/realtime.md "Limits"). */
    socketsPerUser: number;
    /** Commands one socket may send a minute; past it the socket is closed (docs/realtime.md "Limits"). */
    socketCommandsPerMinute: number;
    /** Bytes of a user's pending or unsent client uploads at a time (413 beyond); 0: off. */
    openUploadBytes: number;
    /** Bytes of a user's client uploads per UTC day (429 until the day rolls); 0: off. */
    uploadBytesPerDay: number;
  };
  /** How long a file uploaded but never attached to a message is kept (DynamoDB TTL, object too); 0: for ever. */
  unsentFileTtlSeconds: number;
  sessionTtlSeconds: number;
  fileUrlTtlSeconds: number;
  /** The largest direct upload (POST …/files/uploads), in bytes: 100 MB by default, S3's 5 GB at most. */
  maxUploadBytes: number;
  /** Seconds in one day of a bot's retention_days: 86400; a demo or a test shortens it (policies/retention.ts). */
  retentionDaySeconds: number;
}

let cached: Config | undefined;

/** Reads the environment again on the next config() (the benchmark's cost phase runs with the default limits). */
export function reloadConfig(): void {
  cached = undefined;
}

export function config(): Config {
  if (cached) return cached;
  const maxUpload = maxUploadBytes();
  cached = {
    tableName: requireEnv('TABLE_NAME'),
    bucketName: process.env.BUCKET_NAME || undefined,
    region: process.env.AWS_REGION || 'us-east-1',
    dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT || undefined,
    s3Endpoint: process.env.S3_ENDPOINT || undefined,
    secretsManagerEndpoint: process.env.SECRETS_MANAGER_ENDPOINT || undefined,
    jwtSecretArn: process.env.JWT_SECRET_ARN || undefined,
    jwtSecretFile: process.env.JWT_SECRET_FILE || undefined,
    realtimeUrl: process.env.REALTIME_URL || undefined,
    wsManagementEndpoint: process.env.WS_MANAGEMENT_ENDPOINT || undefined,
    webhookQueueUrl: process.env.WEBHOOK_QUEUE_URL || undefined,
    webhookSlowQueueUrl: process.env.WEBHOOK_SLOW_QUEUE_URL || undefined,
    webhookSlowSeconds: Math.max(intEnv('WEBHOOK_SLOW_SECONDS', 300), 1),
    keepaliveFreeEveryMs: intEnv('SOCKET_KEEPALIVE_FREE_EVERY_MS', 60_000),
    taskQueueUrl: process.env.TASK_QUEUE_URL || undefined,
    publisherRedoQueueUrl: process.env.PUBLISHER_REDO_QUEUE_URL || undefined,
    dispatcherRedoQueueUrl: process.env.DISPATCHER_REDO_QUEUE_URL || undefined,
    eraseDelaySeconds: intEnv('ERASE_DELAY_SECONDS', 15),
    webhookDlqUrl: process.env.WEBHOOK_DLQ_URL || undefined,
    sqsEndpoint: process.env.SQS_ENDPOINT || undefined,
    webhookTimeoutMs: intEnv('WEBHOOK_TIMEOUT_MS', 5000),
    webhookAllowLoopback: webhookAllowLoopback(),
    awsRequestTimeoutMs: intEnv('AWS_REQUEST_TIMEOUT_MS', 2000),
    jwtSecretMaxAgeSeconds: intEnv('JWT_SECRET_MAX_AGE_SECONDS', 300),
    webhookRetryDelays: delaysEnv('WEBHOOK_RETRY_DELAYS', [10, 60, 300, 900, 900]),
    botCacheTtlMs: intEnv('BOT_CACHE_TTL_MS', 30_000),
    chatListShards: Math.max(intEnv('CHAT_LIST_SHARDS', DEFAULT_CHAT_LIST_SHARDS), 1),
    migratePageItems: Math.max(intEnv('MIGRATE_PAGE_ITEMS', 200), 1),
    migratePagesPerRun: Math.max(intEnv('MIGRATE_PAGES_PER_RUN', 0), 0),
    limits: {
      messagesPerMinute: intEnv('RATE_MESSAGES_PER_MINUTE', 60),
      uploadsPerMinute: intEnv('RATE_UPLOADS_PER_MINUTE', 20),
      chatsPerMinute: intEnv('RATE_CHATS_PER_MINUTE', 10),
      readsPerMinute: intEnv('RATE_READS_PER_MINUTE', 600),
      sessionsPerIpPerMinute: intEnv('RATE_SESSIONS_PER_IP_PER_MINUTE', 60),
      chatsPerUser: intEnv('MAX_CHATS_PER_USER', 100),
      socketsPerUser: intEnv('MAX_SOCKETS_PER_USER', 10),
      socketCommandsPerMinute: intEnv('RATE_SOCKET_COMMANDS_PER_MINUTE', 30),
      openUploadBytes: storageQuota('MAX_OPEN_UPLOAD_BYTES', 10, maxUpload),
      uploadBytesPerDay: storageQuota('MAX_UPLOAD_BYTES_PER_DAY', 20, maxUpload),
    },
    unsentFileTtlSeconds: intEnv('UNSENT_FILE_TTL_SECONDS', 24 * 3600),
    sessionTtlSeconds: intEnv('SESSION_TTL_SECONDS', 24 * 3600),
    fileUrlTtlSeconds: intEnv('FILE_URL_TTL_SECONDS', 3600),
    maxUploadBytes: maxUpload,
    retentionDaySeconds: Math.max(intEnv('RETENTION_DAY_SECONDS', 86400), 1),
  };
  return cached;
}
