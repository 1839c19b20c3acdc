// The CDK stack: one table, one files bucket, the JWT secret, the HTTP API (one Lambda per route), and
// webhooks (stream dispatcher → SQS → deliverer), and the realtime part (WebSocket API, stream publisher)
// unless switched off.
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { join } from 'node:path';
import {
  CORS,
  NOT_FOUND,
  PUBLISHER,
  ROUTES,
  STREAM_DELIVERY,
  WEBHOOK_DELIVERER,
  WEBHOOK_DISPATCHER,
  WEBHOOK_QUEUE,
  WS_ROUTES,
  type FunctionDef,
  type QueueName,
  type StreamConsumerDef,
} from './routes';
import { TABLE_SCHEMA } from './table-schema';
import { BUNDLING } from './bundling';

export interface ChatStackProps extends StackProps {
  /** How long handlers cache bot settings (ms); 0 turns the cache off. */
  botCacheTtlMs?: number;
  /** WebSocket API + stream publisher (default on). Off: no realtime block, HTTP only. */
  realtime?: boolean;
  /** API Gateway stage throttling, for both APIs (requests per second, burst). */
  throttle?: { rateLimit: number; burstLimit: number };
  /** Abuse limits, by their environment variable (README "Limits"), e.g. { RATE_MESSAGES_PER_MINUTE: 30 }. */
  limits?: Partial<Record<LimitVariable, number>>;
}

export const LIMIT_VARIABLES = [
  'RATE_MESSAGES_PER_MINUTE',
  'RATE_UPLOADS_PER_MINUTE',
  'RATE_CHATS_PER_MINUTE',
  'RATE_SESSIONS_PER_IP_PER_MINUTE',
  'MAX_CHATS_PER_USER',
] as const;
export type LimitVariable = (typeof LIMIT_VARIABLES)[number];
export const DEFAULT_THROTTLE = { rateLimit: 200, burstLimit: 400 };

const ROOT = join(__dirname, '..');
const attr = (a: { name: string }) => ({ name: a.name, type: dynamodb.AttributeType.STRING });

export class ChatStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  readonly api: HttpApi;
  readonly functions: Record<string, NodejsFunction> = {};
  readonly wsApi?: WebSocketApi;
  readonly wsStage?: WebSocketStage;
  readonly publisherDlq?: sqs.Queue;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly webhookDispatcherDlq: sqs.Queue;
  private readonly jwtSecret: secretsmanager.Secret;
  private readonly baseEnv: Record<string, string>;

  constructor(scope: Construct, id: string, props: ChatStackProps = {}) {
    super(scope, id, props);

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attr(TABLE_SCHEMA.partitionKey),
      sortKey: attr(TABLE_SCHEMA.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: dynamodb.StreamViewType[TABLE_SCHEMA.stream],
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of TABLE_SCHEMA.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: attr(gsi.partitionKey),
        sortKey: attr(gsi.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    this.bucket = new s3.Bucket(this, 'Files', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      // Browsers fetch presigned file URLs directly (image previews, downloads).
      cors: [{ allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD], allowedOrigins: ['*'], maxAge: 3600 }],
    });

    this.jwtSecret = new secretsmanager.Secret(this, 'JwtSecret', {
      description: 'HS256 key that signs session tokens',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });

    this.api = new HttpApi(this, 'ClientApi', {
      description: 'Client API of the chat-bot messaging service',
      defaultIntegration: new HttpLambdaIntegration('not-found-integration', this.makeFunction(NOT_FOUND)),
      createDefaultStage: false, // made below, with throttling
      corsPreflight: {
        allowOrigins: CORS.allowOrigins,
        allowMethods: CORS.allowMethods.map((m) => CorsHttpMethod[m]),
        allowHeaders: CORS.allowHeaders,
        maxAge: Duration.seconds(CORS.maxAgeSeconds),
      },
    });

    const throttle = props.throttle ?? DEFAULT_THROTTLE;
    new HttpStage(this, 'ClientApiStage', { httpApi: this.api, stageName: '$default', autoDeploy: true, throttle });
    this.baseEnv = {
      TABLE_NAME: this.table.tableName,
      BUCKET_NAME: this.bucket.bucketName,
      BOT_CACHE_TTL_MS: String(props.botCacheTtlMs ?? 30_000),
      NODE_OPTIONS: '--enable-source-maps',
      ...Object.fromEntries(Object.entries(props.limits ?? {}).map(([k, v]) => [k, String(v)])),
    };

    // Webhooks: the stream dispatcher queues jobs; the deliverer (SQS consumer) POSTs them.
    const queueProps = { enforceSSL: true, encryption: sqs.QueueEncryption.SQS_MANAGED };
    const webhookDlq = new sqs.Queue(this, 'WebhookDlq', { ...queueProps, retentionPeriod: Duration.days(14) });
    this.queues = {
      webhooks_dlq: webhookDlq,
      webhooks: new sqs.Queue(this, 'WebhookQueue', {
        ...queueProps,
        visibilityTimeout: Duration.seconds(WEBHOOK_QUEUE.visibilityTimeoutSeconds),
        deadLetterQueue: { queue: webhookDlq, maxReceiveCount: WEBHOOK_QUEUE.maxReceiveCount },
      }),
    };
    this.webhookDispatcherDlq = new sqs.Queue(this, 'WebhookDispatcherDlq', { ...queueProps, retentionPeriod: Duration.days(14) });
    this.streamConsumer(WEBHOOK_DISPATCHER, this.webhookDispatcherDlq);
    this.makeFunction(WEBHOOK_DELIVERER).addEventSource(
      new SqsEventSource(this.queues.webhooks, { batchSize: WEBHOOK_QUEUE.batchSize, reportBatchItemFailures: true }),
    );

    if (props.realtime ?? true) {
      // Realtime first: session creation hands out its URL.
      this.wsApi = new WebSocketApi(this, 'RealtimeApi', { description: 'Realtime (Centrifuge client protocol)' });
      this.wsStage = new WebSocketStage(this, 'RealtimeStage', { webSocketApi: this.wsApi, stageName: 'live', autoDeploy: true, throttle });
      for (const route of WS_ROUTES) {
        const fn = this.makeFunction(route);
        this.wsApi.addRoute(route.routeKey, {
          integration: new WebSocketLambdaIntegration(`${route.id}-integration`, fn),
          returnResponse: route.returnResponse,
        });
      }
      this.publisherDlq = new sqs.Queue(this, 'PublisherDlq', { ...queueProps, retentionPeriod: Duration.days(14) });
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

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL; the Client API is under /api/client' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
  }

  /** A function fed by the table's stream: filtered, per-record failures, bounded retries, a dead-letter queue. */
  private streamConsumer(def: StreamConsumerDef, dlq: sqs.Queue): NodejsFunction {
    const fn = this.makeFunction(def);
    fn.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: lambda.StartingPosition.LATEST,
        batchSize: STREAM_DELIVERY.batchSize,
        bisectBatchOnError: true,
        retryAttempts: STREAM_DELIVERY.retryAttempts,
        maxRecordAge: Duration.seconds(STREAM_DELIVERY.maxRecordAgeSeconds),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(dlq),
        filters: def.filters.map((f) => lambda.FilterCriteria.filter(f)),
      }),
    );
    return fn;
  }

  /** One function per definition, granted exactly what the definition lists and nothing else. */
  private makeFunction(def: FunctionDef): NodejsFunction {
    const name = def.id.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
    const environment: Record<string, string> = { ...this.baseEnv };
    if (def.jwt) environment.JWT_SECRET_ARN = this.jwtSecret.secretArn;
    if (def.realtimeUrl && this.wsStage) environment.REALTIME_URL = this.wsStage.url;
    if (def.manageConnections && this.wsStage) environment.WS_MANAGEMENT_ENDPOINT = this.wsStage.callbackUrl;
    if (def.queues?.includes('webhooks')) environment.WEBHOOK_QUEUE_URL = this.queues.webhooks.queueUrl;
    if (def.queues?.includes('webhooks_dlq')) environment.WEBHOOK_DLQ_URL = this.queues.webhooks_dlq.queueUrl;
    const fn = new NodejsFunction(this, `${name}Fn`, {
      entry: join(ROOT, def.entry),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(10),
      environment,
      bundling: BUNDLING,
      depsLockFilePath: join(ROOT, 'package-lock.json'),
      projectRoot: ROOT,
      logGroup: new logs.LogGroup(this, `${name}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    if (def.dynamodb.length) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: def.dynamodb.map((a) => `dynamodb:${a}`),
          resources: [this.table.tableArn, ...(def.index ? [`${this.table.tableArn}/index/*`] : [])],
        }),
      );
    }
    if (def.s3?.length) {
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: def.s3, resources: [this.bucket.arnForObjects('bots/*')] }));
    }
    if (def.jwt) this.jwtSecret.grantRead(fn);
    if (def.manageConnections && this.wsStage) this.wsStage.grantManagementApiAccess(fn);
    for (const q of def.queues ?? []) this.queues[q].grantSendMessages(fn);
    this.functions[def.id] = fn;
    return fn;
  }
}
