// Structured JSON logs of every function, one line per call, in the Powertools for AWS Lambda logger's format
// (level, message, timestamp, service, xray_trace_id when tracing is on, then the fields; errors as name,
// location, message, stack and cause). Written here rather than through Powertools, whose access line took
// ~68 µs of a request's path against ~25 µs for this one (BENCHMARKS.md "Handler overhead").
// Callers pass ids and reasons, never headers, bodies, tokens or secrets. Per-request keys (request id,
// route, bot id, user id) travel with the request and are passed on each call, never kept here, so
// invocations running side by side in one process (the local stack) never mix them.

type Level = 'info' | 'warn' | 'error';

/** Powertools' thresholds, so the same variables set the same levels. */
const THRESHOLDS: Record<string, number> = { TRACE: 6, DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20, CRITICAL: 24, SILENT: 28 };
const NAMES: Record<Level, string> = { info: 'INFO', warn: 'WARN', error: 'ERROR' };

// Read once at cold start, with Powertools' precedence (Lambda's own log level control first).
const { AWS_LAMBDA_LOG_LEVEL, POWERTOOLS_LOG_LEVEL, LOG_LEVEL, POWERTOOLS_SERVICE_NAME } = process.env;
const threshold = THRESHOLDS[(AWS_LAMBDA_LOG_LEVEL ?? POWERTOOLS_LOG_LEVEL ?? LOG_LEVEL ?? 'INFO').toUpperCase()] ?? THRESHOLDS.INFO;
const service = POWERTOOLS_SERVICE_NAME || 'chat-bot';

/** The trace id of the current invocation: Lambda sets it per invocation when tracing is on. */
function traceId(): string | undefined {
  const header = process.env._X_AMZN_TRACE_ID;
  return header ? /Root=([^;]+)/.exec(header)?.[1] : undefined;
}

/** Where an error was thrown: the first `(file:line:column)` of its stack, as `file:line`. */
function location(stack: string | undefined): string {
  const match = stack && /\(([^()\n]*?):(\d+):\d+\)$/m.exec(stack);
  return match ? `${match[1]}:${match[2]}` : '';
}

function formatError(err: Error, depth = 0): Record<string, unknown> {
  const { name, message, stack, cause, ...attributes } = err as Error & { cause?: unknown };
  return {
    name,
    location: location(stack),
    message,
    stack,
    cause: cause instanceof Error && depth < 5 ? formatError(cause, depth + 1) : cause,
    ...attributes,
  };
}

/** A value JSON cannot take as it is (a BigInt, a cycle) must not cost the line: written as text instead. */
function safeJson(entry: Record<string, unknown>): string {
  try {
    return JSON.stringify(entry);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(entry, (_key, value: unknown) => {
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
  }
}

/** One log line; an error (with its cause) goes under `error`. Info goes to stdout, warnings and errors to stderr. */
export function log(level: Level, message: string, fields: Record<string, unknown> = {}, err?: unknown): void {
  const name = NAMES[level];
  if (THRESHOLDS[name] < threshold) return;
  const entry: Record<string, unknown> = { level: name, message, timestamp: new Date().toISOString(), service };
  const trace = traceId();
  if (trace) entry.xray_trace_id = trace;
  Object.assign(entry, fields);
  if (err !== undefined) entry.error = formatError(err instanceof Error ? err : new Error(String(err)));
  (level === 'info' ? process.stdout : process.stderr).write(`${safeJson(entry)}\n`);
}
