// What one Lambda of the stack is (FunctionDef) and the settings every function shares: memory, logging,
// timeouts. The route table (routes.ts) and the consumers (consumers.ts) are lists of these.
import type { ScopeName } from '../lambdas/access/declarations';

export type DynamoAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'Scan'
  | 'PutItem'
  | 'BatchWriteItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'ConditionCheckItem';
/** s3:ListBucket is granted on the bucket for keys under bots/ only (erasure lists a user's files). */
export type S3Action = 's3:GetObject' | 's3:PutObject' | 's3:DeleteObject' | 's3:ListBucket';
/**
 * The SQS queues: webhook jobs (and the slow lane's: jobs of bots whose receiver timed out lately), the Bot API's
 * background tasks, and what failed every retry of each.
 */
export type QueueName = 'webhooks' | 'webhooks_slow' | 'webhooks_dlq' | 'tasks' | 'tasks_dlq';

/** One Lambda: its handler module and exactly the actions it may use. */
export interface FunctionDef {
  /** Stable id: names the Lambda construct and the benchmark key. */
  id: string;
  /** Handler module, relative to the project root; it exports `handler`. */
  entry: string;
  dynamodb: DynamoAction[];
  /**
   * Moves the caller's rate counters with UpdateItem and writes nothing else: dynamodb:UpdateItem granted only on
   * items whose partition key starts with RATE# (IAM's dynamodb:LeadingKeys), so a read endpoint stays unable
   * to change anything else.
   */
  rateCounters?: boolean;
  /** Whether the handler queries the table's indexes (grants their ARNs too): the chat list (gsi2, and gsi1 while chats move). */
  index?: boolean;
  s3?: S3Action[];
  /** Signs or verifies tokens (reads the JWT secret). */
  jwt?: boolean;
  /** Posts to sockets through the WebSocket API's @connections management API. */
  manageConnections?: boolean;
  /** Closes sockets through the same API (a Disconnect push, then DeleteConnection): an erasure closes its user's. */
  closeConnections?: boolean;
  /** Needs the realtime URL (session creation hands it out). */
  realtimeUrl?: boolean;
  /** Queues it sends to (sqs:SendMessage). */
  queues?: QueueName[];
  /** The function's timeout; HTTP and WebSocket handlers get HANDLER_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
  /** Its memory in MB when the stack's memorySize setting is not given (FUNCTION_MEMORY_MB otherwise). */
  memorySize?: number;
}

/** The memory of a function whose definition names none. */
export const FUNCTION_MEMORY_MB = 512;

/**
 * How every function logs (CDK's loggingFormat and system log level; the benchmark's cost phase counts the
 * bytes CloudWatch ingests from it). JSON, with Lambda's own records at WARN: the START, END and REPORT
 * lines of every invocation (a third of an exchange's log bytes) are not written, and a timeout or crash
 * still is; duration, errors and throttles stay in CloudWatch metrics, which the alarms read. The functions'
 * own lines are Powertools JSON at INFO.
 */
export const LAMBDA_LOGGING: { format: 'Text' | 'JSON'; systemLogLevel?: 'DEBUG' | 'INFO' | 'WARN' } = { format: 'JSON', systemLogLevel: 'WARN' };

/** Timeout of every request handler: each AWS call gives up within AWS_CALL_SECONDS, so a request ends well inside. */
export const HANDLER_TIMEOUT_SECONDS = 10;
/**
 * The longest one AWS SDK call of a function can take: 3 attempts bounded by a 1 s connection and a 2 s
 * request timeout, with the SDK's backoff between them (lambdas/aws/options.ts). Consumers' timeouts are
 * sized from it, for a whole batch at its slowest: a timeout fails, and replays, the whole batch.
 */
export const AWS_CALL_SECONDS = 7;

/**
 * Every entry point a request reaches declares its scope: which caller, and whether it reads, updates or creates
 * (lambdas/access/declarations.ts). The handler is made for the same scope (lambdas/http/scoped.ts,
 * lambdas/centrifuge/ws.ts), which builds it before the handler runs; test/e2e/scopes.test.ts walks this table.
 */
export interface Scoped {
  scope: ScopeName;
}
