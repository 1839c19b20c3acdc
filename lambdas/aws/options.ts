// What every AWS SDK client of the functions shares: the region, and waits and attempts bounded so that a slow
// or unreachable dependency fails a request in seconds (503 with Retry-After), well inside the function's 10 s.
import { config } from '../shared/config';

/** Attempts per call, the first included: with the request timeout, the most one call can wait. */
const MAX_ATTEMPTS = 3;

/**
 * Region, retries (the SDK's standard strategy: 5xx, network errors and throttling, with jittered backoff)
 * and the HTTP handler's timeouts. Endpoints are left to the SDK unless the local stack sets one.
 */
export function clientOptions() {
  const { region, awsRequestTimeoutMs } = config();
  return {
    region,
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: Math.min(1000, awsRequestTimeoutMs),
      requestTimeout: awsRequestTimeoutMs,
      // Without it the handler only warns when a request outlives requestTimeout, and waits on.
      throwOnRequestTimeout: true,
    },
  };
}
