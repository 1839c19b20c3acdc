// The APIs' access log formats as plain data: CDK builds the stages' formats from them (lib/stack-logs.ts),
// and the benchmark's cost phase renders them to count the bytes CloudWatch ingests. JSON lines (queryable in
// Logs Insights), HTTP API variables only (CDK's default format uses REST ones, e.g. resourcePath); no query
// string, path or header, so no token ever reaches them.

/** integrationRequestId is the Lambda request id in the function's own log. */
export const HTTP_ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  time: '$context.requestTime',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationRequestId: '$context.integration.requestId',
  integrationError: '$context.integrationErrorMessage',
};

export const WS_ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  time: '$context.requestTime',
  connectionId: '$context.connectionId',
  eventType: '$context.eventType',
  routeKey: '$context.routeKey',
  status: '$context.status',
  error: '$context.error.message',
};
