// The CDK stack: one table, one files bucket, the JWT secret, the HTTP API (one Lambda per route), and
// webhooks (stream dispatcher → SQS → deliverer), and the realtime part (WebSocket API, stream publisher)
// unless switched off; alarms on all of it. Settings: lib/stack-config.ts. cdk-nag acknowledgements sit next
// to the resource they are about, each with its reason.
import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, Validations, type StackProps } from 'aws-cdk-lib';
import type { Construct, IConstruct } from 'constructs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpStage,
  LogGroupLogDestination,
  WebSocketApi,
  WebSocketStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
// cdk-nag names a wildcard finding by this flattening of the policy's resource; we name acknowledgements the same way.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';
import { join } from 'node:path';
import { CORS, HANDLER_TIMEOUT_SECONDS, NOT_FOUND, ROUTES, WS_ROUTES, type FunctionDef, type QueueName } from './routes';
import { PUBLISHER, STREAM_DELIVERY, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE, type StreamConsumerDef } from './consumers';
import { TABLE_SCHEMA } from './table-schema';
import { BUNDLING } from './bundling';
import { resolveConfig, type StackConfig } from './stack-config';

export { DEFAULT_THROTTLE, LIMIT_VARIABLES, type LimitVariable } from './stack-config';

/** Every setting of lib/stack-config.ts, each optional (defaults there), plus the usual stack props. */
export interface ChatStackProps extends StackProps, Partial<StackConfig> {}

const ROOT = join(__dirname, '..');
const attr = (a: { name: string }) => ({ name: a.name, type: dynamodb.AttributeType.STRING });
/** `create_session` → `CreateSession`: construct ids of a function and its role, logs and alarms. */
const pascal = (id: string) => id.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
/**
 * Access log lines as JSON (queryable in Logs Insights), HTTP API variables only (CDK's default format uses
 * REST ones, e.g. resourcePath); integrationRequestId is the Lambda request id in the function's own log.
 */
const HTTP_ACCESS_LOG = AccessLogFormat.custom(
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
const WS_ACCESS_LOG = AccessLogFormat.custom(
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
const acknowledge = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

export class ChatStack extends Stack {
  readonly config: StackConfig;
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  /** Server access logs of the files bucket. */
  readonly accessLogsBucket: s3.Bucket;
  readonly api: HttpApi;
  readonly functions: Record<string, NodejsFunction> = {};
  readonly wsApi?: WebSocketApi;
  readonly wsStage?: WebSocketStage;
  readonly publisherDlq?: sqs.Queue;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly webhookDispatcherDlq: sqs.Queue;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly alarmTopic?: sns.ITopic;
  private readonly jwtSecret: secretsmanager.Secret;
  private readonly baseEnv: Record<string, string>;

  constructor(scope: Construct, id: string, props: ChatStackProps = {}) {
    super(scope, id, props);
    // S3 delivers the access logs under a bucket policy, not an ACL: ACLs are off on our buckets.
    this.node.setContext(cxapi.S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY, true);
    const config = (this.config = resolveConfig(props));
    Tags.of(this).add('stage', config.stage);
    const destroy = config.removalPolicy === 'destroy';
    const dataRemoval = destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN;

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attr(TABLE_SCHEMA.partitionKey),
      sortKey: attr(TABLE_SCHEMA.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: dynamodb.StreamViewType[TABLE_SCHEMA.stream],
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      removalPolicy: dataRemoval,
      // A retained table is also protected from deletion by hand or by a replacement (every user's chats).
      deletionProtection: !destroy,
    });
    for (const gsi of TABLE_SCHEMA.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: attr(gsi.partitionKey),
        sortKey: attr(gsi.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    const privateBucket = {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: dataRemoval,
      // A throwaway stage must be deletable: CloudFormation cannot delete a bucket that still holds objects.
      autoDeleteObjects: destroy,
    };
    this.accessLogsBucket = new s3.Bucket(this, 'AccessLogs', {
      ...privateBucket,
      lifecycleRules: config.logRetentionDays === logs.RetentionDays.INFINITE ? [] : [{ expiration: Duration.days(config.logRetentionDays) }],
    });
    this.bucket = new s3.Bucket(this, 'Files', {
      ...privateBucket,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'files/',
      // Browsers fetch presigned file URLs directly (image previews, downloads): the same origins as the API.
      cors: [{ allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD], allowedOrigins: config.corsOrigins, maxAge: 3600 }],
    });

    this.jwtSecret = new secretsmanager.Secret(this, 'JwtSecret', {
      description: 'HS256 key that signs session tokens',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      // Losing it ends every session: it stays with the data unless the stage is a throwaway one.
      removalPolicy: dataRemoval,
    });
    acknowledge(
      this.jwtSecret,
      'AwsSolutions-SMG4',
      'The session-signing key: rotating it ends every live session, and no rotation Lambda is worth that; replace it by hand if it leaks.',
    );

    this.api = new HttpApi(this, 'ClientApi', {
      description: `Client API of the chat-bot messaging service (${config.stage})`,
      defaultIntegration: new HttpLambdaIntegration('not-found-integration', this.makeFunction(NOT_FOUND)),
      createDefaultStage: false, // made below, with throttling and access logs
      corsPreflight: {
        allowOrigins: config.corsOrigins,
        allowMethods: CORS.allowMethods.map((m) => CorsHttpMethod[m]),
        allowHeaders: CORS.allowHeaders,
        maxAge: Duration.seconds(CORS.maxAgeSeconds),
      },
    });
    acknowledge(
      this.api,
      'AwsSolutions-APIG4',
      'Each handler authorizes itself: session JWT (client routes), the bot secret key (Bot API), client_key and allowed origins (POST /session); an authorizer would add a hop.',
    );
    const { throttle } = config;
    // Custom domain (extension point, not built): an apigatewayv2 DomainName with an ACM certificate, passed
    // here as `domainMapping` (and the same for the WebSocket stage, whose URL then becomes REALTIME_URL).
    new HttpStage(this, 'ClientApiStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: { destination: new LogGroupLogDestination(this.logGroup('ClientApiAccessLogs')), format: HTTP_ACCESS_LOG },
    });
    this.baseEnv = {
      TABLE_NAME: this.table.tableName,
      BUCKET_NAME: this.bucket.bucketName,
      BOT_CACHE_TTL_MS: String(config.botCacheTtlMs),
      NODE_OPTIONS: '--enable-source-maps',
      ...Object.fromEntries(Object.entries(config.limits).map(([k, v]) => [k, String(v)])),
    };

    // Webhooks: the stream dispatcher queues jobs; the deliverer (SQS consumer) POSTs them.
    const queueProps = { enforceSSL: true, encryption: sqs.QueueEncryption.SQS_MANAGED };
    /** Where what failed every retry waits, 14 days (the SQS maximum), to be looked at and redriven. */
    // They hold what failed every retry: kept with the data, as the table is.
    const deadLetterQueue = (qid: string) =>
      new sqs.Queue(this, qid, { ...queueProps, retentionPeriod: Duration.days(14), removalPolicy: dataRemoval });
    const webhookDlq = deadLetterQueue('WebhookDlq');
    this.queues = {
      webhooks_dlq: webhookDlq,
      webhooks: new sqs.Queue(this, 'WebhookQueue', {
        ...queueProps,
        visibilityTimeout: Duration.seconds(WEBHOOK_QUEUE.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: webhookDlq, maxReceiveCount: WEBHOOK_QUEUE.maxReceiveCount },
      }),
    };
    this.webhookDispatcherDlq = deadLetterQueue('WebhookDispatcherDlq');
    this.streamConsumer(WEBHOOK_DISPATCHER, this.webhookDispatcherDlq);
    this.makeFunction(WEBHOOK_DELIVERER).addEventSource(
      new SqsEventSource(this.queues.webhooks, { batchSize: WEBHOOK_QUEUE.batchSize, reportBatchItemFailures: true }),
    );

    if (config.realtime) {
      // Realtime first: session creation hands out its URL.
      this.wsApi = new WebSocketApi(this, 'RealtimeApi', { description: `Realtime (Centrifuge client protocol, ${config.stage})` });
      acknowledge(
        this.wsApi,
        'AwsSolutions-APIG4',
        '$connect refuses a bad ?token= before the socket opens; $default answers 101 to anything before a connect with a valid token; $disconnect drops our records.',
      );
      this.wsStage = new WebSocketStage(this, 'RealtimeStage', {
        webSocketApi: this.wsApi,
        stageName: 'live',
        autoDeploy: true,
        throttle,
        accessLogSettings: config.wsAccessLogs
          ? { destination: new LogGroupLogDestination(this.logGroup('RealtimeApiAccessLogs')), format: WS_ACCESS_LOG }
          : undefined,
      });
      if (!config.wsAccessLogs) {
        acknowledge(
          this.wsStage,
          'AwsSolutions-APIG1',
          'WebSocket access logs need the account-wide API Gateway CloudWatch role, which one stack must not own; on with context wsAccessLogs=true once the account has it.',
        );
      }
      for (const route of WS_ROUTES) {
        const fn = this.makeFunction(route);
        this.wsApi.addRoute(route.routeKey, {
          integration: new WebSocketLambdaIntegration(`${route.id}-integration`, fn),
          returnResponse: route.returnResponse,
        });
      }
      this.publisherDlq = deadLetterQueue('PublisherDlq');
      this.streamConsumer(PUBLISHER, this.publisherDlq);
      new CfnOutput(this, 'RealtimeUrl', { value: this.wsStage.url, description: 'WebSocket URL (also in every session response)' });
    }

    for (const route of ROUTES) {
      const fn = this.makeFunction(route);
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.id}-integration`, fn),
      });
    }

    this.alarmTopic = this.addAlarms();

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL; the Client API is under /api/client' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
  }

  /** A log group of this stack: the configured retention, deleted with the stack. */
  private logGroup(id: string): logs.LogGroup {
    return new logs.LogGroup(this, id, { retention: this.config.logRetentionDays, removalPolicy: RemovalPolicy.DESTROY });
  }

  /** A function fed by the table's stream: filtered, per-record failures, bounded retries, a dead-letter queue. */
  private streamConsumer(def: StreamConsumerDef, dlq: sqs.Queue): NodejsFunction {
    const fn = this.makeFunction(def);
    fn.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: lambda.StartingPosition[def.startingPosition],
        batchSize: def.batchSize,
        parallelizationFactor: STREAM_DELIVERY.parallelizationFactor,
        bisectBatchOnError: true,
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

  /** One function per definition, granted exactly what the definition lists and nothing else. */
  private makeFunction(def: FunctionDef): NodejsFunction {
    const name = pascal(def.id);
    const { config } = this;
    const environment: Record<string, string> = { ...this.baseEnv };
    if (def.jwt) environment.JWT_SECRET_ARN = this.jwtSecret.secretArn;
    if (def.realtimeUrl && this.wsStage) environment.REALTIME_URL = this.wsStage.url;
    if (def.manageConnections && this.wsStage) environment.WS_MANAGEMENT_ENDPOINT = this.wsStage.callbackUrl;
    if (def.queues?.includes('webhooks')) environment.WEBHOOK_QUEUE_URL = this.queues.webhooks.queueUrl;
    if (def.queues?.includes('webhooks_dlq')) environment.WEBHOOK_DLQ_URL = this.queues.webhooks_dlq.queueUrl;
    // Our own role rather than the AWSLambdaBasicExecutionRole managed policy: it may write to this
    // function's log group only, not create or write any log group of the account.
    const role = new iam.Role(this, `${name}Role`, { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    const logGroup = this.logGroup(`${name}Logs`);
    logGroup.grantWrite(role);
    const fn = new NodejsFunction(this, `${name}Fn`, {
      entry: join(ROOT, def.entry),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: config.architecture === 'x86_64' ? lambda.Architecture.X86_64 : lambda.Architecture.ARM_64,
      memorySize: config.memorySize,
      timeout: Duration.seconds(def.timeoutSeconds ?? HANDLER_TIMEOUT_SECONDS),
      environment,
      bundling: BUNDLING,
      depsLockFilePath: join(ROOT, 'package-lock.json'),
      projectRoot: ROOT,
      role,
      logGroup,
      tracing: config.tracing ? lambda.Tracing.ACTIVE : undefined, // adds xray:Put* (on *, X-Ray has no resources)
    });
    acknowledge(fn, 'AwsSolutions-L1', 'Node.js 22 on purpose: the bundles target node22 (lib/bundling.ts) and the tests run on Node 20/22.');
    if (def.dynamodb.length) {
      const indexes = def.index ? TABLE_SCHEMA.globalSecondaryIndexes.map((g) => `${this.table.tableArn}/index/${g.indexName}`) : [];
      fn.addToRolePolicy(
        new iam.PolicyStatement({ actions: def.dynamodb.map((a) => `dynamodb:${a}`), resources: [this.table.tableArn, ...indexes] }),
      );
    }
    if (def.s3?.length) {
      const objects = this.bucket.arnForObjects('bots/*');
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: def.s3, resources: [objects] }));
      acknowledge(role, this.wildcardFinding(objects), 'Files are objects under bots/<bot id>/, made at run time: the grant is to that prefix, never the bucket.');
    }
    // Exactly the calls the code makes (the IAM tier against moto shows each is needed): the grant helpers
    // would add secretsmanager:DescribeSecret and sqs:GetQueueAttributes/GetQueueUrl, which nothing calls.
    if (def.jwt) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.jwtSecret.secretArn] }));
    if (def.manageConnections && this.wsApi && this.wsStage) {
      const api = this.formatArn({ service: 'execute-api', resource: this.wsApi.apiId });
      // POST (PostToConnection) only: nothing deletes (DeleteConnection) or reads (GetConnection) a socket.
      const connections = `${api}/${this.wsStage.stageName}/POST/@connections/*`;
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['execute-api:ManageConnections'], resources: [connections] }));
      acknowledge(role, this.wildcardFinding(connections), 'Connection ids exist only at run time: the grant is to POST @connections/* of this API\'s live stage.');
    }
    for (const q of def.queues ?? []) fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queues[q].queueArn] }));
    // Actions IAM cannot scope to a resource: the stream mapping's dynamodb:ListStreams, and X-Ray's.
    const unscoped = [
      ...('filters' in def ? ['dynamodb:ListStreams (stream event source)'] : []),
      ...(config.tracing ? ['xray:PutTraceSegments/PutTelemetryRecords'] : []),
    ];
    if (unscoped.length) {
      acknowledge(role, 'AwsSolutions-IAM5[Resource::*]', `${unscoped.join(' and ')}: IAM allows no resource narrower than *.`);
    }
    this.functions[def.id] = fn;
    return fn;
  }

  /** Alarms on what should never happen quietly, sent to the configured SNS topic (if any). */
  private addAlarms(): sns.ITopic | undefined {
    const { config } = this;
    let topic: sns.ITopic | undefined;
    if (config.alarmTopicArn) topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    if (config.alarmEmail) {
      const own = new sns.Topic(this, 'AlarmTopic', { displayName: `Chat bot ${config.stage} alarms`, enforceSSL: true });
      own.addSubscription(new EmailSubscription(config.alarmEmail));
      topic = own;
    }
    const period = Duration.minutes(5);
    const alarm = (id: string, metric: cloudwatch.IMetric, threshold: number, description: string) => {
      const a = new cloudwatch.Alarm(this, id, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `${config.stage}: ${description}`,
      });
      if (topic) {
        a.addAlarmAction(new SnsAction(topic));
        a.addOkAction(new SnsAction(topic));
      }
      this.alarms.push(a);
    };

    for (const [id, fn] of Object.entries(this.functions)) {
      // Handled failures are replies (4xx, 5xx); a Lambda error is a crash or a timeout: each one is a bug.
      alarm(`${pascal(id)}Errors`, fn.metricErrors({ period, statistic: 'Sum' }), 1, `${id} crashed or timed out`);
      alarm(`${pascal(id)}Throttles`, fn.metricThrottles({ period, statistic: 'Sum' }), 1, `${id} was throttled (account concurrency)`);
      // One step from a timeout (which fails the request, or replays a consumer's whole batch).
      const timeoutMs = fn.timeout!.toMilliseconds();
      alarm(`${pascal(id)}NearTimeout`, fn.metricDuration({ period, statistic: 'Maximum' }), 0.8 * timeoutMs, `${id} ran 80 % or more of its ${timeoutMs / 1000} s timeout`);
    }
    const streamConsumers = [WEBHOOK_DISPATCHER, ...(config.realtime ? [PUBLISHER] : [])];
    for (const def of streamConsumers) {
      const fn = this.functions[def.id];
      const age = fn.metric('IteratorAge', { period, statistic: 'Maximum' });
      alarm(`${pascal(def.id)}IteratorAge`, age, 60_000, `${def.id} is a minute or more behind the table stream`);
      // Records reported back as failed are retried (and the batch's later records with them) before any
      // reaches the dead-letter queue; Lambda counts such a batch as a success, so its log line is counted.
      // No default value: nothing is published (or billed) while nothing fails.
      const filter = fn.logGroup.addMetricFilter(`${pascal(def.id)}FailureLines`, {
        filterPattern: logs.FilterPattern.stringValue('$.message', '=', def.failureLog),
        metricNamespace: `ChatBot/${config.stage}`,
        metricName: `${pascal(def.id)}BatchItemFailures`,
        metricValue: '1',
      });
      alarm(`${pascal(def.id)}BatchItemFailures`, filter.metric({ period, statistic: 'Sum' }), 1, `${def.id} reported stream records as failed (retried)`);
    }
    // The oldest webhook job: retries wait up to 15 min (WEBHOOK_RETRY_DELAYS), so 30 min means the
    // deliverer is not keeping up or not running.
    const oldest = this.queues.webhooks.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' });
    alarm('WebhookQueueOldestJob', oldest, 1800, 'a webhook job has waited 30 minutes or more');
    if (this.wsApi && this.wsStage) {
      // API Gateway could not run the integration (a Lambda that failed to run, a permission, a timeout);
      // IntegrationError would also count $connect's 401s to bad tokens, which are answers.
      const wsErrors = new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName: 'ExecutionError',
        dimensionsMap: { ApiId: this.wsApi.apiId, Stage: this.wsStage.stageName },
        period,
        statistic: 'Sum',
      });
      alarm('RealtimeApiExecutionErrors', wsErrors, 1, 'the WebSocket API failed to run an integration');
    }
    // Every table operation the functions make (transactions carry the condition checks).
    const operations = [
      dynamodb.Operation.GET_ITEM,
      dynamodb.Operation.BATCH_GET_ITEM,
      dynamodb.Operation.QUERY,
      dynamodb.Operation.PUT_ITEM,
      dynamodb.Operation.UPDATE_ITEM,
      dynamodb.Operation.DELETE_ITEM,
      dynamodb.Operation.TRANSACT_WRITE_ITEMS,
    ];
    alarm('TableThrottledRequests', this.table.metricThrottledRequestsForOperations({ operations, period }), 1, 'DynamoDB throttled requests (retried, then 503)');
    alarm('TableSystemErrors', this.table.metricSystemErrorsForOperations({ operations, period }), 1, 'DynamoDB answered requests with a 500');
    const rate = new cloudwatch.MathExpression({
      // Below 20 requests in 5 minutes a rate says little: one failed request would be 5 %.
      expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
      usingMetrics: {
        errors: this.api.metricServerError({ period, statistic: 'Sum' }),
        requests: this.api.metricCount({ period, statistic: 'Sum' }),
      },
      period,
      label: 'HTTP API 5xx %',
    });
    alarm('ClientApi5xxRate', rate, 5, '5 % or more of HTTP API requests answered 5xx');
    const dlqs = { WebhookDlq: this.queues.webhooks_dlq, WebhookDispatcherDlq: this.webhookDispatcherDlq, PublisherDlq: this.publisherDlq };
    for (const [id, queue] of Object.entries(dlqs)) {
      if (!queue) continue;
      const depth = queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' });
      alarm(`${id}Depth`, depth, 1, `${id} holds messages that failed every retry`);
    }
    return topic;
  }

  /** cdk-nag's id of the IAM5 finding on a wildcard resource, e.g. AwsSolutions-IAM5[Resource::<Files8E6940B8.Arn>/bots/*]. */
  private wildcardFinding(resource: string): string {
    return `AwsSolutions-IAM5[Resource::${flattenCfnReference(this.resolve(resource))}]`;
  }
}
