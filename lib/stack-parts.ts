// What the stack's helpers (stack-functions.ts, stack-alarms.ts, stack-logs.ts, stack-nag.ts) wire together: the
// stack's resources, as lib/stack.ts's ChatStack holds them. Its own module, so the helpers take the stack
// without importing the file that imports them.
import type { Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { HttpApi, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { QueueName } from './routes';
import type { StackConfig } from './stack-config';

export interface StackParts extends Stack {
  readonly config: StackConfig;
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  readonly api: HttpApi;
  /** Every function by its id (lib/routes.ts, lib/consumers.ts). */
  readonly functions: Record<string, NodejsFunction>;
  /** Absent with realtime off. */
  readonly wsApi?: WebSocketApi;
  readonly wsStage?: WebSocketStage;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly publisherDlq: sqs.Queue;
  readonly webhookDispatcherDlq: sqs.Queue;
  /** Per stream consumer: what failed every redo of a record set aside (the record itself is in the message). */
  readonly redoDlqs: Record<'publisher' | 'webhook_dispatcher', sqs.Queue>;
  /** S3 events the upload completer failed on after Lambda's retries. */
  readonly uploadCompleterDlq: sqs.Queue;
  readonly alarms: cloudwatch.Alarm[];
  /** Signs session tokens; functions with `jwt` read it. */
  readonly jwtSecret: secretsmanager.Secret;
  /** The environment every function gets (table, bucket, cache TTL, limits). */
  readonly baseEnv: Record<string, string>;
}
