// Structured JSON logs of every function through the Powertools for AWS Lambda logger: one line per call,
// errors once with their cause. Levels come from AWS_LAMBDA_LOG_LEVEL, POWERTOOLS_LOG_LEVEL or LOG_LEVEL.
// Callers pass ids and reasons, never headers, bodies, tokens or secrets. Per-request keys (request id,
// route, bot id, user id) are passed on each call, never appended to the logger, so invocations running
// side by side in one process (the local stack) never mix them.
import { Logger } from '@aws-lambda-powertools/logger';

const logger = new Logger({ serviceName: 'chat-bot' });

type Level = 'info' | 'warn' | 'error';

/** One log line; an error (with its cause) goes under `error`. */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}, err?: unknown): void {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrown non-Error (a string, in practice) is logged as its String() form
  logger[level](message, err === undefined ? fields : { ...fields, error: err instanceof Error ? err : new Error(String(err)) });
}
