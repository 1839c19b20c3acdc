// The stack's log groups and the APIs' access log formats.
import { RemovalPolicy } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import type { ChatStack } from './stack';

/**
 * Access log lines as JSON (queryable in Logs Insights), HTTP API variables only (CDK's default format uses
 * REST ones, e.g. resourcePath); integrationRequestId is the Lambda request id in the function's own log.
 */
export const HTTP_ACCESS_LOG = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    time: '$context.requestTime',
    routeKey: '$context.routeKey',
    status: '$context.status',
    responseLength: '$context.responseLength',
    latencyMs: '$context.responseLatency',
    integrationRequestId: '$context.integration.requestId',
    integrationError: '$context.integrationErrorMessage',
  }),
);
export const WS_ACCESS_LOG = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    time: '$context.requestTime',
    connectionId: '$context.connectionId',
    eventType: '$context.eventType',
    routeKey: '$context.routeKey',
    status: '$context.status',
    error: '$context.error.message',
  }),
);
/** A cdk-nag finding we accept, on this construct and everything under it. */

/** A log group of this stack: the configured retention, deleted with the stack. */
export function logGroup(stack: ChatStack, id: string): logs.LogGroup {
  return new logs.LogGroup(stack, id, { retention: stack.config.logRetentionDays, removalPolicy: RemovalPolicy.DESTROY });
}
