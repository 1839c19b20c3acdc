// The stack's functions: one per route or consumer definition, granted exactly what it lists, and the stream
// consumers' event sources.
import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { join } from 'node:path';
import { FUNCTION_MEMORY_MB, HANDLER_TIMEOUT_SECONDS, LAMBDA_LOGGING, type FunctionDef } from './routes';
import { REDO_QUEUE, STREAM_DELIVERY, type StreamConsumerDef } from './consumers';
import { TABLE_SCHEMA } from './table-schema';
import { RATE_KEY_PREFIX } from '../lambdas/entities/keys';
import { BUNDLING } from './bundling';
import { logGroup } from './stack-logs';
import { acknowledge, wildcardFinding } from './stack-nag';
import type { StackParts } from './stack-parts';

const ROOT = join(__dirname, '..');
/** `create_session` → `CreateSession`: construct ids of a function and its role, logs and alarms. */
export const pascal = (id: string) => id.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase());

/** One function per definition, granted exactly what the definition lists and nothing else. */
export function makeFunction(stack: StackParts, def: FunctionDef, memorySize?: number): NodejsFunction {
  const name = pascal(def.id);
  const { config } = stack;
  const environment: Record<string, string> = { ...stack.baseEnv };
  if (def.jwt) environment.JWT_SECRET_ARN = stack.jwtSecret.secretArn;
  if (def.realtimeUrl && stack.wsStage) environment.REALTIME_URL = stack.wsStage.url;
  if ((def.manageConnections || def.closeConnections) && stack.wsStage) environment.WS_MANAGEMENT_ENDPOINT = stack.wsStage.callbackUrl;
  if (def.queues?.includes('webhooks')) environment.WEBHOOK_QUEUE_URL = stack.queues.webhooks.queueUrl;
  if (def.queues?.includes('webhooks_slow')) environment.WEBHOOK_SLOW_QUEUE_URL = stack.queues.webhooks_slow.queueUrl;
  if (def.queues?.includes('webhooks_dlq')) environment.WEBHOOK_DLQ_URL = stack.queues.webhooks_dlq.queueUrl;
  if (def.queues?.includes('tasks')) environment.TASK_QUEUE_URL = stack.queues.tasks.queueUrl;
  // Our own role rather than the AWSLambdaBasicExecutionRole managed policy: it may write to this
  // function's log group only, not create or write any log group of the account.
  const role = new iam.Role(stack, `${name}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
  const logs = logGroup(stack, `${name}Logs`);
  logs.grantWrite(role);
  const fn = new NodejsFunction(stack, `${name}Fn`, {
    entry: join(ROOT, def.entry),
    handler: 'handler',
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: config.architecture === 'x86_64' ? lambda.Architecture.X86_64 : lambda.Architecture.ARM_64,
    memorySize: memorySize ?? config.memorySize ?? def.memorySize ?? FUNCTION_MEMORY_MB,
    // JSON lines, Lambda's own START/END/REPORT lines off (CloudWatch metrics carry duration and errors).
    loggingFormat: lambda.LoggingFormat[LAMBDA_LOGGING.format === 'JSON' ? 'JSON' : 'TEXT'],
    ...(LAMBDA_LOGGING.systemLogLevel && {
      systemLogLevelV2: lambda.SystemLogLevel[LAMBDA_LOGGING.systemLogLevel],
      applicationLogLevelV2: lambda.ApplicationLogLevel.INFO,
    }),
    timeout: Duration.seconds(def.timeoutSeconds ?? HANDLER_TIMEOUT_SECONDS),
    environment,
    bundling: BUNDLING,
    depsLockFilePath: join(ROOT, 'package-lock.json'),
    projectRoot: ROOT,
    role,
    logGroup: logs,
    tracing: config.tracing ? lambda.Tracing.ACTIVE : undefined, // adds xray:Put* (on *, X-Ray has no resources)
  });
  acknowledge(fn, 'AwsSolutions-L1', 'Node.js 22 on purpose: the bundles target node22 (lib/bundling.ts) and the tests run on Node 20/22.');
  if (def.dynamodb.length) {
    const indexes = def.index ? TABLE_SCHEMA.globalSecondaryIndexes.map((g) => `${stack.table.tableArn}/index/${g.indexName}`) : [];
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: def.dynamodb.map((a) => `dynamodb:${a}`), resources: [stack.table.tableArn, ...indexes] }),
    );
  }
  if (def.rateCounters) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [stack.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${RATE_KEY_PREFIX}*`] } },
      }),
    );
  }
  const objectActions = def.s3?.filter((a) => a !== 's3:ListBucket') ?? [];
  if (objectActions.length) {
    const objects = stack.bucket.arnForObjects('bots/*');
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: objectActions, resources: [objects] }));
    acknowledge(role, wildcardFinding(stack, objects), 'Files are objects under bots/<bot id>/, made at run time: the grant is to that prefix, never the bucket.');
  }
  if (def.s3?.includes('s3:ListBucket')) {
    // Listing is a bucket action: only of keys under bots/ (an erasure lists one user's files).
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [stack.bucket.bucketArn], conditions: { StringLike: { 's3:prefix': ['bots/*'] } } }),
    );
  }
  // Exactly the calls the code makes (the IAM tier against moto shows each is needed): the grant helpers
  // would add secretsmanager:DescribeSecret and sqs:GetQueueAttributes/GetQueueUrl, which nothing calls.
  if (def.jwt) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [stack.jwtSecret.secretArn] }));
  if ((def.manageConnections || def.closeConnections) && stack.wsApi && stack.wsStage) {
    const api = stack.formatArn({ service: 'execute-api', resource: stack.wsApi.apiId });
    // POST (PostToConnection) to publish or to push a disconnect, DELETE (DeleteConnection) to close: nothing
    // reads a socket (GetConnection).
    const methods = ['POST', ...(def.closeConnections ? ['DELETE'] : [])];
    const connections = methods.map((m) => `${api}/${stack.wsStage!.stageName}/${m}/@connections/*`);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['execute-api:ManageConnections'], resources: connections }));
    for (const c of connections) {
      acknowledge(role, wildcardFinding(stack, c), 'Connection ids exist only at run time: the grant is to @connections/* of this API\'s live stage.');
    }
  }
  for (const q of def.queues ?? []) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [stack.queues[q].queueArn] }));
  // Actions IAM cannot scope to a resource: the stream mapping's dynamodb:ListStreams, and X-Ray's.
  const unscoped = [
    ...('filters' in def ? ['dynamodb:ListStreams (stream event source)'] : []),
    ...(config.tracing ? ['xray:PutTraceSegments/PutTelemetryRecords'] : []),
  ];
  if (unscoped.length) {
    acknowledge(role, 'AwsSolutions-IAM5[Resource::*]', `${unscoped.join(' and ')}: IAM allows no resource narrower than *.`);
  }
  stack.functions[def.id] = fn;
  return fn;
}

/**
 * A function fed by the table's stream: filtered, per-record failures, bounded retries, a dead-letter queue; and by
 * its FIFO redo queue (what a batch set aside, one group per user), whose own dead-letter queue is `redoDlq`.
 */
export function streamConsumer(stack: StackParts, def: StreamConsumerDef, dlq: sqs.Queue, redoDlq: sqs.Queue): NodejsFunction {
  const fn = makeFunction(stack, def, stack.config.streamConsumerMemorySize);
  const redo = new sqs.Queue(stack, `${pascal(def.id)}RedoQueue`, {
    fifo: true,
    enforceSSL: true,
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    visibilityTimeout: Duration.seconds(REDO_QUEUE.visibilityTimeoutSeconds),
    // As long as a hold may last (entities/stream-holds.ts): a user's records wait here until redone.
    retentionPeriod: Duration.days(14),
    deadLetterQueue: { queue: redoDlq, maxReceiveCount: REDO_QUEUE.maxReceiveCount },
  });
  fn.addEnvironment(def.redoQueueEnv, redo.queueUrl);
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [redo.queueArn] }));
  fn.addEventSource(new SqsEventSource(redo, { batchSize: REDO_QUEUE.batchSize, reportBatchItemFailures: true }));
  fn.addEventSource(
    new DynamoEventSource(stack.table, {
      startingPosition: lambda.StartingPosition[def.startingPosition],
      batchSize: stack.config.streamBatchSize,
      ...(stack.config.streamBatchingWindowSeconds && { maxBatchingWindow: Duration.seconds(stack.config.streamBatchingWindowSeconds) }),
      parallelizationFactor: STREAM_DELIVERY.parallelizationFactor,
      bisectBatchOnError: STREAM_DELIVERY.bisectBatchOnFunctionError,
      retryAttempts: STREAM_DELIVERY.retryAttempts,
      maxRecordAge: Duration.seconds(STREAM_DELIVERY.maxRecordAgeSeconds),
      reportBatchItemFailures: true,
      onFailure: new SqsDlq(dlq),
      filters: def.filters.map((f) => lambda.FilterCriteria.filter(f)),
    }),
  );
  acknowledge(dlq, 'AwsSolutions-SQS3', `This queue is itself a dead-letter queue: the on-failure destination of the ${def.id} stream mapping.`);
  return fn;
}
