// Structured JSON logs of every function, through Powertools for AWS Lambda's logger (service name and level
// from POWERTOOLS_SERVICE_NAME and POWERTOOLS_LOG_LEVEL; X-Ray trace id added when tracing is on).
// Callers pass ids and reasons, never headers, bodies, tokens or secrets. Per-request keys (request id,
// route, bot id, user id) travel with the request and are passed on each call, not appended to this shared
// logger, so invocations running side by side in one process (the local stack) never mix them.
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'chat-bot' });

/** One log line; an error (with its cause) goes under `error`: name, message, location, stack. */
export function log(level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}, err?: unknown): void {
  logger[level](message, err === undefined ? fields : { ...fields, error: err instanceof Error ? err : new Error(String(err)) });
}
