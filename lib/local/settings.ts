// Settings of the local stack from the environment (shared by `npm start`, the bot CLI and the tests).
import { resolve } from 'node:path';
import { WEBHOOK_CONCURRENCY } from '../consumers';

export interface LocalSettings {
  root: string;
  dataDir: string;
  host: string;
  port: number;
  /** WebSocket gateway (and its @connections API); unused when realtime is off. */
  wsPort: number;
  realtime: boolean;
  /** The local SQS API (webhook queue and its dead-letter queue). */
  sqsPort: number;
  /** The example echo bot answering the demo bot's webhooks; off with ECHO_BOT=off. */
  echoBot: boolean;
  echoBotPort: number;
  dynamodbPort: number;
  /** DynamoDB Local keeps its tables in memory: gone at the stop (a throwaway stack, e.g. a test run's). */
  dynamodbInMemory: boolean;
  s3Port: number;
  tableName: string;
  bucketName: string;
  /** Webhooks may go to localhost and 127.0.0.1 (WEBHOOK_ALLOW_LOOPBACK, on by default here; refused on Lambda). */
  webhookAllowLoopback: boolean;
  /** How often expired items are deleted (DynamoDB Local keeps them; AWS's TTL deletes them). */
  ttlSweepMs: number;
  /**
   * The longest a restarted stack waits, before its stream poller reads on from where it stopped, for the
   * sockets the restart cut to reconnect (they then get the publications of the backlog).
   */
  streamResumeWaitMs: number;
  /** The webhook deliverer's invocations at once on the webhook queue and on the slow lane's (lib/consumers.ts). */
  webhookConcurrency: number;
  webhookSlowConcurrency: number;
  /** The WebSocket gateway closes a socket that sent nothing this long (API Gateway's idle timeout, 10 minutes). */
  wsIdleMs: number;
  /**
   * The stream poller's pause between reads while records may come (within 2 s of an invocation): each read is a
   * GetRecords of DynamoDB Local, about 3 ms of CPU between the emulator and the stack.
   */
  streamPollMs: number;
}

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw ? Number(raw) : fallback;
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name} must be a port number (1-65535), got "${raw}"`);
  return n;
}

function onOff(name: string, fallback: 'on' | 'off' = 'on'): boolean {
  const raw = (process.env[name] ?? fallback).toLowerCase();
  if (!['on', 'off', 'true', 'false', '1', '0'].includes(raw)) throw new Error(`${name} must be on or off, got "${raw}"`);
  return ['on', 'true', '1'].includes(raw);
}

/**
 * The address every service of the local stack listens on: this machine only, or every interface. The stack's
 * own clients reach its services on 127.0.0.1, which a specific other address would not answer.
 */
function listenHost(): string {
  const raw = process.env.HOST || '127.0.0.1';
  if (!['127.0.0.1', '0.0.0.0', '::'].includes(raw)) throw new Error(`HOST must be 127.0.0.1 (this machine only), or 0.0.0.0 or :: (every interface), got "${raw}"`);
  return raw;
}

function ms(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  const n = raw ? Number(raw) : fallback;
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be a whole number of ms, ${min} or more, got "${raw}"`);
  return n;
}

/** An SQS event source's maximum concurrency, with AWS's bounds (the stage's setting, lib/stack-config.ts). */
function concurrency(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw ? Number(raw) : fallback;
  const { min, max } = WEBHOOK_CONCURRENCY;
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function localSettings(): LocalSettings {
  const root = resolve(__dirname, '..', '..');
  return {
    root,
    dataDir: resolve(root, process.env.DATA_DIR || '.data'),
    host: listenHost(),
    port: port('PORT', 3000),
    wsPort: port('WS_PORT', 3001),
    realtime: onOff('REALTIME'),
    sqsPort: port('SQS_PORT', 4576),
    echoBot: onOff('ECHO_BOT'),
    echoBotPort: port('ECHO_BOT_PORT', 3002),
    dynamodbPort: port('DYNAMODB_PORT', 8000),
    dynamodbInMemory: onOff('DYNAMODB_IN_MEMORY', 'off'),
    s3Port: port('S3_PORT', 4569),
    tableName: process.env.TABLE_NAME || 'chat-local',
    bucketName: process.env.BUCKET_NAME || 'chat-files-local',
    webhookAllowLoopback: onOff('WEBHOOK_ALLOW_LOOPBACK'),
    ttlSweepMs: ms('LOCAL_TTL_SWEEP_MS', 60_000, 100),
    streamResumeWaitMs: ms('LOCAL_STREAM_RESUME_WAIT_MS', 10_000, 0),
    webhookConcurrency: concurrency('WEBHOOK_CONCURRENCY', WEBHOOK_CONCURRENCY.fast),
    webhookSlowConcurrency: concurrency('WEBHOOK_SLOW_CONCURRENCY', WEBHOOK_CONCURRENCY.slow),
    wsIdleMs: ms('LOCAL_WS_IDLE_MS', 10 * 60_000, 100),
    streamPollMs: ms('LOCAL_STREAM_POLL_MS', 10, 1),
  };
}

export const dynamoEndpoint = (s: LocalSettings): string => `http://127.0.0.1:${s.dynamodbPort}`;
export const jwtSecretFile = (s: LocalSettings): string => resolve(s.dataDir, 'jwt-secret');
export const sqsEndpoint = (s: LocalSettings): string => `http://localhost:${s.sqsPort}`;
/** The stream consumers' redo queues, by consumer id (FIFO on AWS and here, lib/local/local-queue.ts). */
export const REDO_QUEUE_NAMES = { publisher: 'publisher_redo', webhook_dispatcher: 'webhook_dispatcher_redo' } as const;

/** A local queue's URL, shaped as SQS's (the local SQS API reads the queue name off its end). */
const queueUrl = (s: LocalSettings, name: string): string => `${sqsEndpoint(s)}/000000000000/${name}`;

/** The environment the handlers read (lambdas/shared/config.ts), pointed at the local emulators. */
export function applyLocalEnv(s: LocalSettings): void {
  Object.assign(process.env, {
    TABLE_NAME: s.tableName,
    BUCKET_NAME: s.bucketName,
    DYNAMODB_ENDPOINT: dynamoEndpoint(s),
    S3_ENDPOINT: `http://localhost:${s.s3Port}`,
    JWT_SECRET_FILE: jwtSecretFile(s),
    SQS_ENDPOINT: sqsEndpoint(s),
    WEBHOOK_QUEUE_URL: queueUrl(s, 'webhooks'),
    WEBHOOK_SLOW_QUEUE_URL: queueUrl(s, 'webhooks_slow'),
    WEBHOOK_DLQ_URL: queueUrl(s, 'webhooks_dlq'),
    TASK_QUEUE_URL: queueUrl(s, 'tasks'),
    PUBLISHER_REDO_QUEUE_URL: queueUrl(s, REDO_QUEUE_NAMES.publisher),
    DISPATCHER_REDO_QUEUE_URL: queueUrl(s, REDO_QUEUE_NAMES.webhook_dispatcher),
    // The echo bot and the tests' receivers listen on loopback; private ranges stay refused all the same.
    WEBHOOK_ALLOW_LOOPBACK: s.webhookAllowLoopback ? 'on' : 'off',
    AWS_REGION: process.env.AWS_REGION || 'us-east-1',
    // The S3 emulator verifies signatures with its fixed key; DynamoDB Local accepts any.
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    // This machine runs Node 20; the SDK's notice about Node 22 would drown the stack's own output.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  });
  if (s.realtime) {
    process.env.REALTIME_URL = `ws://localhost:${s.wsPort}`;
    process.env.WS_MANAGEMENT_ENDPOINT = `http://localhost:${s.wsPort}`;
  } else {
    delete process.env.REALTIME_URL;
    delete process.env.WS_MANAGEMENT_ENDPOINT;
  }
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
}
