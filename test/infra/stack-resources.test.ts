// CDK assertions on the default stack's resources: table, bucket, secret, HTTP API routes (one function each), realtime, webhooks, timeouts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
// Template.fromJSON costs ~0.1 s in a worker (it loads only the assertions); the stacks come from the run's one synth.
import { Match, Template } from 'aws-cdk-lib/assertions';
import { loadShape } from '../support/cdk-template';
import { template as shape, type StackIds } from '../support/shapes';
import { AWS_CALL_SECONDS, CORS, HANDLER_TIMEOUT_SECONDS, NOT_FOUND, ROUTES, WS_ROUTES } from '../../lib/routes';
import { propsOf, resourcesOf, valuesOfType, type FunctionProps, type IntegrationProps, type PolicyProps, type Resources, type RouteProps } from './cfn';
import { ASYNC_DELIVERY, PUBLISHER, STREAM_DELIVERY, UPLOAD_COMPLETER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE, TASK_QUEUE, TASK_WORKER } from '../../lib/consumers';

let template: Template;
let resources: Resources;
let ids: StackIds;
beforeAll(async () => {
  ({ template, ids } = await loadShape('Defaults'));
  resources = resourcesOf(template);
});
const sortedSet = (xs: string[]) => [...new Set(xs)].sort();

test('the table: on-demand, PITR, stream with old and new images, TTL, gsi1, retained and protected from deletion', () => {
  template.hasResource('AWS::DynamoDB::Table', {
    DeletionPolicy: 'Retain',
    Properties: {
      DeletionProtectionEnabled: true,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true },
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'gsi1', Projection: { ProjectionType: 'ALL' } })],
    },
  });
});

test('the files bucket: private, encrypted, SSL only, CORS for GET and POST uploads, retained; browser POSTs under bots/ invoke the upload completer', () => {
  template.hasResource('AWS::S3::Bucket', {
    DeletionPolicy: 'Retain',
    Properties: Match.objectLike({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: ['GET', 'HEAD', 'POST'], AllowedOrigins: ['*'] })] },
    }),
  });
  template.hasResourceProperties('AWS::S3::BucketPolicy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    },
  });
  const completer = ids.functions[UPLOAD_COMPLETER.id];
  template.hasResourceProperties('Custom::S3BucketNotifications', {
    NotificationConfiguration: {
      LambdaFunctionConfigurations: [
        {
          Events: ['s3:ObjectCreated:Post'],
          Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'bots/' }] } },
          LambdaFunctionArn: { 'Fn::GetAtt': [completer, 'Arn'] },
        },
      ],
    },
  });
  // S3 invokes it asynchronously: Lambda's retries, then the event to a dead-letter queue with an alarm.
  template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
    FunctionName: { Ref: completer },
    MaximumRetryAttempts: ASYNC_DELIVERY.retryAttempts,
    MaximumEventAgeInSeconds: ASYNC_DELIVERY.maxEventAgeSeconds,
    DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^UploadCompleterDlq'), 'Arn'] } } },
  });
});

test('HTTP API: CORS for any origin with every header a handler reads; one route per table entry (nine client routes)', () => {
  template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
    ProtocolType: 'HTTP',
    CorsConfiguration: Match.objectLike({
      AllowOrigins: ['*'],
      AllowHeaders: ['authorization', 'content-type', 'idempotency-key'],
      ExposeHeaders: ['retry-after'],
      AllowMethods: ['GET', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
      MaxAge: 7200,
    }),
  });
  // Every header a handler reads (req.header('…')) is allowed, but Origin, which the browser sets itself: a
  // header added later without its CORS entry would fail every browser's preflight.
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  const read = sources(join(__dirname, '../../lambdas')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\.header\('([^']+)'\)/g)].map((m) => m[1].toLowerCase()));
  expect(read).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
  expect(sortedSet(read).filter((h) => h !== 'origin' && !CORS.allowHeaders.includes(h))).toEqual([]);
  const routeKeys = valuesOfType<RouteProps>(resources, 'AWS::ApiGatewayV2::Route')
    .filter((r) => !r.Properties.RouteKey.startsWith('$') && r.Properties.ApiId.Ref === ids.api)
    .map((r) => r.Properties.RouteKey)
    .sort();
  expect(routeKeys).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  expect(routeKeys.filter((k) => k.includes('/api/client/'))).toHaveLength(9);
});

test('each route has its own function: Node 22 on arm64, with the table, bucket and secret configured', () => {
  const fnIds = ROUTES.map((r) => ids.functions[r.id]);
  expect(new Set(fnIds).size).toBe(ROUTES.length);
  for (const route of ROUTES) {
    const props = propsOf<FunctionProps>(resources, ids.functions[route.id]);
    expect(props.Runtime).toBe('nodejs22.x');
    expect(props.Architectures).toEqual(['arm64']);
    const expected = ['BOT_CACHE_TTL_MS', 'BUCKET_NAME', 'NODE_OPTIONS', 'TABLE_NAME'];
    if (route.jwt) expected.push('JWT_SECRET_ARN'); // the Bot API never sees the JWT key
    if (route.id === 'create_session') expected.push('REALTIME_URL'); // only session creation hands out the URL
    if (route.closeConnections) expected.push('WS_MANAGEMENT_ENDPOINT'); // an erasure closes the user's sockets
    if (route.queues?.includes('tasks')) expected.push('TASK_QUEUE_URL');
    expect({ route: route.id, env: Object.keys(props.Environment!.Variables).sort() }).toEqual({ route: route.id, env: expected.sort() });
  }
  // Every integration points at a different function.
  const integrationTargets = valuesOfType<IntegrationProps>(resources, 'AWS::ApiGatewayV2::Integration')
    .filter((r) => r.Properties.IntegrationType === 'AWS_PROXY' && r.Properties.PayloadFormatVersion === '2.0')
    .map((r) => JSON.stringify(r.Properties.IntegrationUri));
  expect(new Set(integrationTargets).size).toBe(ROUTES.length + 1); // + the default route's not-found function
  template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default', ApiId: { Ref: ids.api } });
  template.hasResourceProperties('AWS::ApiGatewayV2::Integration', { PayloadFormatVersion: '2.0' });
});

test('a Secrets Manager secret holds the JWT key; outputs name the API URL, table and bucket', () => {
  template.resourceCountIs('AWS::SecretsManager::Secret', 1);
  template.hasResourceProperties('AWS::SecretsManager::Secret', {
    GenerateSecretString: Match.objectLike({ PasswordLength: 64, ExcludePunctuation: true }),
  });
  const outputs = (template.toJSON() as { Outputs: Record<string, unknown> }).Outputs;
  expect(Object.keys(outputs).sort()).toEqual(['ApiUrl', 'BucketName', 'RealtimeUrl', 'TableName']);
});

describe('realtime', () => {
  test('WebSocket API with $connect, $default (route response) and $disconnect, each its own function', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
    const routes = valuesOfType<RouteProps>(resources, 'AWS::ApiGatewayV2::Route').filter((r) => r.Properties.ApiId.Ref === ids.wsApi!);
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const def = routes.find((r) => r.Properties.RouteKey === '$default');
    expect(def?.Properties.RouteResponseSelectionExpression).toBe('$default');
    template.hasResourceProperties('AWS::ApiGatewayV2::RouteResponse', { RouteResponseKey: '$default' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AutoDeploy: true });
    expect(new Set(WS_ROUTES.map((r) => ids.functions[r.id])).size).toBe(3);
  });

  test('publisher: the table stream, filtered, per-record failures, bisect, bounded retries and age, SQS on failure', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [ids.table, 'StreamArn'] },
      FunctionName: { Ref: ids.functions.publisher },
      // Chats' counters follow from its records, so it skips none; one batch per shard keeps order.
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: PUBLISHER.batchSize,
      ParallelizationFactor: 1,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_DELIVERY.retryAttempts,
      MaximumRecordAgeInSeconds: STREAM_DELIVERY.maxRecordAgeSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [ids.publisherDlq!, 'Arn'] } } },
      FilterCriteria: { Filters: PUBLISHER.filters.map((f) => ({ Pattern: JSON.stringify(f) })) },
    });
    const env = propsOf<FunctionProps>(resources, ids.functions.publisher).Environment!.Variables;
    expect(env.WS_MANAGEMENT_ENDPOINT).toBeDefined();
    expect(env.JWT_SECRET_ARN).toBeUndefined();
  });

  test('realtime off: no WebSocket API, no realtime URL; the publisher only moves chats; the HTTP API is whole', async () => {
    const off = Template.fromJSON(await shape('RealtimeOff'));
    off.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    // The webhook pipeline (its stream dispatcher and SQS deliverer), the task worker and the publisher, on new messages only.
    off.resourceCountIs('AWS::Lambda::EventSourceMapping', 4);
    off.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: Match.stringLikeRegexp('^PublisherFn') },
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(PUBLISHER.filters[0]) }] },
    });
    off.resourceCountIs('AWS::SQS::Queue', 7);
    // + publisher, webhook dispatcher, deliverer, upload completer, task worker, not-found, and S3's notification handler (CDK's own)
    off.resourceCountIs('AWS::Lambda::Function', ROUTES.length + 7);
    // It calls nothing but the chat update: no socket to post to, no file to sign for.
    const policies = valuesOfType<PolicyProps>(off, 'AWS::IAM::Policy').filter((p) => JSON.stringify(p.Properties.Roles).includes('PublisherRole'));
    expect(JSON.stringify(policies)).not.toMatch(/execute-api|s3:|dynamodb:Query|dynamodb:DeleteItem/);
    expect(JSON.stringify(policies)).toContain('dynamodb:UpdateItem');
    off.resourceCountIs('AWS::ApiGatewayV2::Route', ROUTES.length + 1); // + $default
    expect(JSON.stringify(off.toJSON())).not.toContain('REALTIME_URL');
    expect(Object.keys((off.toJSON() as { Outputs: Record<string, unknown> }).Outputs)).not.toContain('RealtimeUrl');
  });
});

describe('webhooks', () => {
  test('dispatcher: the stream, filtered to incoming messages, same failure handling as the publisher', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ids.functions.webhook_dispatcher },
      EventSourceArn: { 'Fn::GetAtt': [ids.table, 'StreamArn'] },
      // Nothing written while the mapping is created or replaced is skipped; a repeat is deduped by receivers.
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: WEBHOOK_DISPATCHER.batchSize,
      ParallelizationFactor: 1,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_DELIVERY.retryAttempts,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [ids.webhookDispatcherDlq, 'Arn'] } } },
      FilterCriteria: { Filters: WEBHOOK_DISPATCHER.filters.map((f) => ({ Pattern: JSON.stringify(f) })) },
    });
  });

  test('deliverer: fed by the webhook queue with per-message failures; the queue dead-letters after 5 receives', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ids.functions.webhook_deliverer },
      EventSourceArn: { 'Fn::GetAtt': [ids.queues.webhooks, 'Arn'] },
      BatchSize: WEBHOOK_QUEUE.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: WEBHOOK_QUEUE.visibilityTimeoutSeconds,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [ids.queues.webhooks_dlq, 'Arn'] }, maxReceiveCount: WEBHOOK_QUEUE.maxReceiveCount },
    });
    const env = propsOf<FunctionProps>(resources, ids.functions.webhook_deliverer).Environment!.Variables;
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['WEBHOOK_QUEUE_URL', 'WEBHOOK_DLQ_URL']));
  });
});

test('timeouts: 10 s for request handlers; stream consumers sized to a whole batch at its slowest; the deliverer within its queue\'s visibility', () => {
  const timeout = (id: string) => propsOf<FunctionProps>(resources, ids.functions[id]).Timeout;
  for (const def of [...ROUTES, ...WS_ROUTES, NOT_FOUND]) expect([def.id, timeout(def.id)]).toEqual([def.id, HANDLER_TIMEOUT_SECONDS]);
  // AWS calls made one after another per batch, each bounded by AWS_CALL_SECONDS (lib/routes.ts says why):
  // the publisher's records of one user go in turn, each the chat's update (up to three writes), the bot's
  // read, a Query, then the posts in parallel; the dispatcher
  // makes per record at worst a reminder's three calls (chat read, put, delayed job), then sends the jobs 10
  // per SendMessageBatch.
  const sequentialCalls = { publisher: (n: number) => 6 * n, webhook_dispatcher: (n: number) => 3 * n + Math.ceil(n / 10) };
  for (const def of [PUBLISHER, WEBHOOK_DISPATCHER]) {
    expect([def.id, timeout(def.id)]).toEqual([def.id, def.timeoutSeconds]);
    expect(def.timeoutSeconds).toBeGreaterThanOrEqual(sequentialCalls[def.id as keyof typeof sequentialCalls](def.batchSize) * AWS_CALL_SECONDS);
    expect(def.timeoutSeconds).toBeLessThanOrEqual(900); // Lambda's maximum
  }
  // Lambda refuses an SQS mapping whose queue hides a message for less time than the function may run.
  expect(timeout('webhook_deliverer')).toBe(WEBHOOK_DELIVERER.timeoutSeconds);
  // Its slowest job, a reminder's first attempt, makes five calls one after another and the POST: one call to spare.
  expect(WEBHOOK_DELIVERER.timeoutSeconds).toBeGreaterThanOrEqual(6 * AWS_CALL_SECONDS + 5);
  // Six times the function's timeout, as AWS asks of a queue feeding Lambda (throttled receives count too).
  expect(WEBHOOK_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * WEBHOOK_DELIVERER.timeoutSeconds!);
  expect(TASK_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * TASK_WORKER.timeoutSeconds!);
});
