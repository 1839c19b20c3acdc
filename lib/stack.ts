// The CDK stack: one table, one files bucket, the JWT secret, the HTTP API (one Lambda per route), and
// webhooks (stream dispatcher → SQS → deliverer), and the realtime part (WebSocket API, stream publisher)
// unless switched off; alarms on all of it. Settings: lib/stack-config.ts. Helpers in the stack's scope: its
// functions and grants (stack-functions.ts), alarms (stack-alarms.ts), log groups and access log formats
// (stack-logs.ts), cdk-nag acknowledgements (stack-nag.ts: each made next to its resource, with its reason).
import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import * as cxapi from 'aws-cdk-lib/cx-api';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as s3n from 'aws-cdk-lib/aws-s3-notifications';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
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
import { CORS, NOT_FOUND, ROUTES, WS_ROUTES, type QueueName } from './routes';
import { ASYNC_DELIVERY, publisherFor, TASK_QUEUE, TASK_WORKER, UPLOAD_COMPLETER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE } from './consumers';
import { makeFunction, streamConsumer } from './stack-functions';
import { addAlarms } from './stack-alarms';
import { HTTP_ACCESS_LOG, WS_ACCESS_LOG, logGroup } from './stack-logs';
import { acknowledge } from './stack-nag';
import { TABLE_SCHEMA } from './table-schema';
import type { StackParts } from './stack-parts';
import { throttleRoutes } from './stack-throttles';
import { deployWeb, webHosting, type WebHosting } from './stack-web';
import { resolveConfig, type StackConfig } from './stack-config';

export { DEFAULT_THROTTLE, LIMIT_VARIABLES, type LimitVariable } from './stack-config';

/** Every setting of lib/stack-config.ts, each optional (defaults there), plus the usual stack props. */
export interface ChatStackProps extends StackProps, Partial<StackConfig> {}

const attr = (a: { name: string }) => ({ name: a.name, type: dynamodb.AttributeType.STRING });

/** The stack; what its helpers use of it is lib/stack-parts.ts's StackParts (documented there). */
export class ChatStack extends Stack implements StackParts {
  readonly config: StackConfig;
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  /** Server access logs of the files bucket. */
  readonly accessLogsBucket: s3.Bucket;
  /** The chat page and widget's bucket and distribution (stack-web.ts); absent with webHosting off. */
  readonly web?: WebHosting;
  readonly api: HttpApi;
  readonly functions: Record<string, NodejsFunction> = {};
  readonly wsApi?: WebSocketApi;
  readonly wsStage?: WebSocketStage;
  readonly publisherDlq: sqs.Queue;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly webhookDispatcherDlq: sqs.Queue;
  readonly redoDlqs: Record<'publisher' | 'webhook_dispatcher', sqs.Queue>;
  readonly uploadCompleterDlq: sqs.Queue;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly alarmTopic?: sns.ITopic;
  readonly jwtSecret: secretsmanager.Secret;
  readonly baseEnv: Record<string, string>;

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
      // Partitions made ahead for a sale day's peak (docs/sizing.md); unset, DynamoDB's own.
      warmThroughput: config.warmThroughput,
    });
    for (const gsi of TABLE_SCHEMA.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: attr(gsi.partitionKey),
        sortKey: attr(gsi.sortKey),
        projectionType: dynamodb.ProjectionType[gsi.projection],
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
      lifecycleRules: config.logRetentionDays === (logs.RetentionDays.INFINITE as number) ? [] : [{ expiration: Duration.days(config.logRetentionDays) }],
    });
    this.web = config.webHosting ? webHosting(this, this.accessLogsBucket) : undefined;
    // The hosted page calls the API and reads files from the distribution's origin: allowed where CORS lists origins.
    const corsOrigins = this.web && !config.corsOrigins.includes('*') ? [...config.corsOrigins, this.web.origin] : config.corsOrigins;
    this.bucket = new s3.Bucket(this, 'Files', {
      ...privateBucket,
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'files/',
      // Browsers fetch presigned file URLs directly (image previews, downloads) and POST direct uploads (the
      // policy is the authorization; a progress listener makes the browser ask first): the API's origins.
      cors: [{ allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD, s3.HttpMethods.POST], allowedOrigins: corsOrigins, allowedHeaders: ['*'], maxAge: 3600 }],
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

    // Before the first function is made (the API's default route below): each copies it.
    this.baseEnv = {
      TABLE_NAME: this.table.tableName,
      BUCKET_NAME: this.bucket.bucketName,
      BOT_CACHE_TTL_MS: String(config.botCacheTtlMs),
      CHAT_LIST_SHARDS: String(config.chatListShards),
      NODE_OPTIONS: '--enable-source-maps',
      ...Object.fromEntries(Object.entries(config.limits).map(([k, v]) => [k, String(v)])),
    };

    this.api = new HttpApi(this, 'ClientApi', {
      description: `Client API of the chat-bot messaging service (${config.stage})`,
      defaultIntegration: new HttpLambdaIntegration('not-found-integration', makeFunction(this, NOT_FOUND)),
      createDefaultStage: false, // made below, with throttling and access logs
      corsPreflight: {
        allowOrigins: corsOrigins,
        allowMethods: CORS.allowMethods.map((m) => CorsHttpMethod[m]),
        allowHeaders: CORS.allowHeaders,
        exposeHeaders: CORS.exposeHeaders,
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
    const httpStage = new HttpStage(this, 'ClientApiStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: { destination: new LogGroupLogDestination(logGroup(this, 'ClientApiAccessLogs')), format: HTTP_ACCESS_LOG },
    });

    // Webhooks: the stream dispatcher queues jobs; the deliverer (SQS consumer) POSTs them.
    const queueProps = { enforceSSL: true, encryption: sqs.QueueEncryption.SQS_MANAGED };
    /** Where what failed every retry waits, 14 days (the SQS maximum), to be looked at and redriven. */
    // They hold what failed every retry: kept with the data, as the table is.
    const deadLetterQueue = (qid: string) =>
      new sqs.Queue(this, qid, { ...queueProps, retentionPeriod: Duration.days(14), removalPolicy: dataRemoval });
    const webhookDlq = deadLetterQueue('WebhookDlq');
    const taskDlq = deadLetterQueue('TaskDlq');
    // Both lanes of webhook jobs (lambdas/flows/webhook-lanes.ts) redrive to the one dead-letter queue.
    const webhookQueue = (qid: string) =>
      new sqs.Queue(this, qid, {
        ...queueProps,
        visibilityTimeout: Duration.seconds(WEBHOOK_QUEUE.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: webhookDlq, maxReceiveCount: WEBHOOK_QUEUE.maxReceiveCount },
      });
    this.queues = {
      webhooks_dlq: webhookDlq,
      webhooks: webhookQueue('WebhookQueue'),
      webhooks_slow: webhookQueue('WebhookSlowQueue'),
      tasks_dlq: taskDlq,
      tasks: new sqs.Queue(this, 'TaskQueue', {
        ...queueProps,
        visibilityTimeout: Duration.seconds(TASK_QUEUE.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: taskDlq, maxReceiveCount: TASK_QUEUE.maxReceiveCount },
      }),
    };
    this.webhookDispatcherDlq = deadLetterQueue('WebhookDispatcherDlq');
    // A FIFO queue's dead-letter queue is FIFO too.
    const redoDlq = (qid: string) => new sqs.Queue(this, qid, { ...queueProps, fifo: true, retentionPeriod: Duration.days(14), removalPolicy: dataRemoval });
    this.redoDlqs = { webhook_dispatcher: redoDlq('WebhookDispatcherRedoDlq'), publisher: redoDlq('PublisherRedoDlq') };
    streamConsumer(this, WEBHOOK_DISPATCHER, this.webhookDispatcherDlq, this.redoDlqs.webhook_dispatcher);
    // One deliverer on both lanes, each with its own maximum concurrency: a bot whose receiver hangs fills the
    // slow lane's few slots, never the fast lane's.
    const deliverer = makeFunction(this, WEBHOOK_DELIVERER);
    for (const [queue, maxConcurrency] of [[this.queues.webhooks, config.webhookConcurrency], [this.queues.webhooks_slow, config.webhookSlowConcurrency]] as const) {
      deliverer.addEventSource(new SqsEventSource(queue, { batchSize: WEBHOOK_QUEUE.batchSize, reportBatchItemFailures: true, maxConcurrency }));
    }

    // Direct uploads: a browser's POST under bots/ invokes the completer, which checks and settles the file.
    this.uploadCompleterDlq = deadLetterQueue('UploadCompleterDlq');
    const completer = makeFunction(this, UPLOAD_COMPLETER);
    completer.configureAsyncInvoke({
      retryAttempts: ASYNC_DELIVERY.retryAttempts,
      maxEventAge: Duration.seconds(ASYNC_DELIVERY.maxEventAgeSeconds),
      onFailure: new SqsDestination(this.uploadCompleterDlq),
    });
    acknowledge(this.uploadCompleterDlq, 'AwsSolutions-SQS3', 'This queue is itself a dead-letter queue: the on-failure destination of the upload completer.');
    this.bucket.addEventNotification(s3.EventType.OBJECT_CREATED_POST, new s3n.LambdaDestination(completer), { prefix: UPLOAD_COMPLETER.events.prefix });
    // CDK's own custom resource that writes the bucket's notification configuration, run only on deploys.
    const notificationsHandler = this.node.children.find((c) => c.node.id.startsWith('BucketNotificationsHandler'));
    acknowledge(
      notificationsHandler!.node.findChild('Role'),
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "CDK's bucket-notifications handler (runs on deploy only, to set the bucket's notification configuration): its role is CDK's, with the basic execution policy.",
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
          ? { destination: new LogGroupLogDestination(logGroup(this, 'RealtimeApiAccessLogs')), format: WS_ACCESS_LOG }
          : undefined,
      });
      if (!config.wsAccessLogs) {
        acknowledge(
          this.wsStage,
          'AwsSolutions-APIG1',
          'WebSocket access logs need the account-wide API Gateway CloudWatch role, which one stack must not own; on with context wsAccessLogs=true once the account has it.',
        );
      }
      const wsRoutes = WS_ROUTES.map((route) => {
        const fn = makeFunction(this, route);
        const made = this.wsApi!.addRoute(route.routeKey, {
          integration: new WebSocketLambdaIntegration(`${route.id}-integration`, fn),
          returnResponse: route.returnResponse,
        });
        return { key: route.routeKey, route: made };
      });
      throttleRoutes(this.wsStage, wsRoutes, config.routeThrottles);
      new CfnOutput(this, 'RealtimeUrl', { value: this.wsStage.url, description: 'WebSocket URL (also in every session response)' });
    }

    // The Bot API's background tasks (erasing a user); after the realtime API: it closes the user's sockets.
    makeFunction(this, TASK_WORKER).addEventSource(
      new SqsEventSource(this.queues.tasks, { batchSize: TASK_QUEUE.batchSize, reportBatchItemFailures: true }),
    );

    // After the realtime API (it hands the function its @connections endpoint); with realtime off it only counts.
    this.publisherDlq = deadLetterQueue('PublisherDlq');
    streamConsumer(this, publisherFor(config.realtime), this.publisherDlq, this.redoDlqs.publisher);

    const httpRoutes = ROUTES.map((route) => {
      const fn = makeFunction(this, route);
      const [made] = this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.id}-integration`, fn),
      });
      return { key: `${route.method} ${route.path}`, route: made };
    });
    throttleRoutes(httpStage, httpRoutes, config.routeThrottles);

    this.alarmTopic = addAlarms(this);

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL; the Client API is under /api/client' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
    if (this.web) deployWeb(this, this.web);
  }
}
