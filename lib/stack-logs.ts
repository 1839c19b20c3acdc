// The stack's log groups and the APIs' access log formats.
import { RemovalPolicy } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HTTP_ACCESS_LOG_FIELDS, WS_ACCESS_LOG_FIELDS } from './log-formats';
import type { StackParts } from './stack-parts';

/** The access log formats of lib/log-formats.ts. */
export const HTTP_ACCESS_LOG = AccessLogFormat.custom(JSON.stringify(HTTP_ACCESS_LOG_FIELDS));
export const WS_ACCESS_LOG = AccessLogFormat.custom(JSON.stringify(WS_ACCESS_LOG_FIELDS));
/** A cdk-nag finding we accept, on this construct and everything under it. */

/** A log group of this stack: the configured retention, deleted with the stack. */
export function logGroup(stack: StackParts, id: string): logs.LogGroup {
  return new logs.LogGroup(stack, id, { retention: stack.config.logRetentionDays, removalPolicy: RemovalPolicy.DESTROY });
}
