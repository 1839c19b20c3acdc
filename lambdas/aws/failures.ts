// Which AWS failures mean "a dependency is down, retry shortly" (a 503, a temporary realtime error) and which
// no retry can change: read from the SDK's errors, for both transports' error mappers.

/** AWS's errors asking the caller to slow down: retried by the SDK first. */
const THROTTLING_ERRORS = ['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'];
const UNAVAILABLE_NAMES = new Set(['TimeoutError', 'RequestTimeout', ...THROTTLING_ERRORS, 'ServiceUnavailable', 'SlowDown']);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);
/** Refusals that no retry can change, whatever status carried them: a 500, never a 503 with Retry-After. */
const PERMANENT_NAMES = new Set(['ValidationException', 'SerializationException', 'ItemCollectionSizeLimitExceededException']);

/**
 * An AWS dependency unreachable, timed out, throttling or failing (5xx) after the SDK's retries: the request
 * may succeed if retried shortly. Wrapped errors (Powertools Parameters wraps the SDK's) are read by cause.
 */
export function isUnavailable(err: unknown, depth = 0): boolean {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number }; cause?: unknown } | undefined;
  if (!e || typeof e !== 'object' || PERMANENT_NAMES.has(e.name ?? '')) return false;
  if (UNAVAILABLE_NAMES.has(e.name ?? '') || UNAVAILABLE_CODES.has(e.code ?? '') || (e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  return depth < 3 && isUnavailable(e.cause, depth + 1);
}
