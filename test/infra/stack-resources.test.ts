// CDK assertions on the default stack's resources: table, bucket, secret, HTTP API routes (one function each), realtime, webhooks, timeouts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
// Template.fromJSON costs ~0.1 s in a worker (it loads only the assertions); the stacks come from the run's one synth.
import { Match, Template } from 'aws-cdk-lib/assertions';
import { loadShape } from '../support/cdk-template';
import { template as shape, type StackIds } from '../support/shapes';
import { DEFAULT_CONFIG } from '../../lib/stack-config';
import { AWS_CALL_SECONDS, CORS, HANDLER_TIMEOUT_SECONDS, NOT_FOUND, ROUTES, WS_ROUTES } from '../../lib/routes';
import { propsOf, resourcesOf, valuesOfType, type FunctionProps, type IntegrationProps, type PolicyProps, type Resources, type RouteProps } from './cfn';
import { ASYNC_DELIVERY, PUBLISHER, REDO_QUEUE, STREAM_DELIVERY, UPLOAD_COMPLETER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE, TASK_QUEUE, TASK_WORKER } from '../../lib/consumers';
import { RECORD_TRIES } from '../../lambdas/aws/stream-batch';

let template: Template;
let resources: Resources;
let ids: StackIds;
beforeAll(async () => {
  ({ template, ids } = await loadShape('Defaults'));
  resources = resourcesOf(template);
});
const sortedSet = (xs: string[]) => [...new Set(xs)].sort();

test('the table: on-demand, PITR, stream with old and new images, TTL, gsi1 (whole items) and gsi2 (keys only), retained and protected from deletion', () => {
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
      GlobalSecondaryIndexes: [
        Match.objectLike({ IndexName: 'gsi1', Projection: { ProjectionType: 'ALL' } }),
        Match.objectLike({
          IndexName: 'gsi2',
          KeySchema: [
            { AttributeName: 'gsi2pk', KeyType: 'HASH' },
            { AttributeName: 'gsi2sk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        }),
      ],
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

test('HTTP API: CORS for any origin with every header a handler reads; one route per table entry (ten client routes)', () => {
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
  expect(routeKeys.filter((k) => k.includes('/api/client/'))).toHaveLength(10);
});

test('each route has its own function: Node 22 on arm64, with the table, bucket and secret configured', () => {
  const fnIds = ROUTES.map((r) => ids.functions[r.id]);
  expect(new Set(fnIds).size).toBe(ROUTES.length);
  for (const route of ROUTES) {
    const props = propsOf<FunctionProps>(resources, ids.functions[route.id]);
    expect(props.Runtime).toBe('nodejs22.x');
    expect(props.Architectures).toEqual(['arm64']);
    const expected = ['BOT_CACHE_TTL_MS', 'BUCKET_NAME', 'CHAT_LIST_SHARDS', 'NODE_OPTIONS', 'TABLE_NAME'];
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

test('a Secrets Manager secret holds the JWT key; outputs name the API URL, table and bucket, the chat page and the widget tag', () => {
  template.resourceCountIs('AWS::SecretsManager::Secret', 1);
  template.hasResourceProperties('AWS::SecretsManager::Secret', {
    GenerateSecretString: Match.objectLike({ PasswordLength: 64, ExcludePunctuation: true }),
  });
  const outputs = (template.toJSON() as { Outputs: Record<string, unknown> }).Outputs;
  expect(Object.keys(outputs).sort()).toEqual(['ApiUrl', 'BucketName', 'RealtimeUrl', 'TableName', 'WebUrl', 'WidgetScriptTag']);
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
      BatchSize: DEFAULT_CONFIG.streamBatchSize,
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

  test('each stream consumer: a FIFO redo queue it sends to and consumes (per-message failures), dead-lettered to a FIFO queue', () => {
    for (const def of [PUBLISHER, WEBHOOK_DISPATCHER]) {
      const { queue, dlq } = ids.redoQueues[def.id as 'publisher'];
      expect(resources[queue].Properties).toMatchObject({
        FifoQueue: true,
        VisibilityTimeout: REDO_QUEUE.visibilityTimeoutSeconds,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: REDO_QUEUE.maxReceiveCount },
      });
      expect(resources[dlq].Properties).toMatchObject({ FifoQueue: true });
      // Lambda refuses an SQS mapping whose queue hides a message for less time than the function may run.
      expect(REDO_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(def.timeoutSeconds);
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: ids.functions[def.id] },
        EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
        BatchSize: REDO_QUEUE.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      expect(propsOf<FunctionProps>(resources, ids.functions[def.id]).Environment!.Variables[def.redoQueueEnv]).toEqual({ Ref: queue });
    }
  });

  test('realtime off: no WebSocket API, no realtime URL; the publisher only moves chats; the HTTP API is whole', async () => {
    const off = Template.fromJSON(await shape('RealtimeOff'));
    off.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    // The webhook pipeline (its stream dispatcher and SQS deliverer, on both lanes), the task worker and the publisher, on new
    // messages only; and each stream consumer's redo queue.
    off.resourceCountIs('AWS::Lambda::EventSourceMapping', 7);
    off.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: Match.stringLikeRegexp('^PublisherFn') },
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(PUBLISHER.filters[0]) }] },
    });
    off.resourceCountIs('AWS::SQS::Queue', 12);
    // + publisher, webhook dispatcher, deliverer, upload completer, task worker, not-found, and S3's notification handler (CDK's own)
    off.resourceCountIs('AWS::Lambda::Function', ROUTES.length + 7);
    // It calls nothing but the chat update: no socket to post to, no file to sign for.
    const policies = valuesOfType<PolicyProps>(off, 'AWS::IAM::Policy').filter((p) => JSON.stringify(p.Properties.Roles).includes('PublisherRole'));
    // Besides the chat update, only its redo path: the holds (read by a Query of the channel's partition) and a
    // too large record read again; nothing of the sockets or files.
    expect(JSON.stringify(policies)).not.toMatch(/execute-api|s3:|BatchGetItem|PutItem/);
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
      BatchSize: DEFAULT_CONFIG.streamBatchSize,
      ParallelizationFactor: 1,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_DELIVERY.retryAttempts,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [ids.webhookDispatcherDlq, 'Arn'] } } },
      FilterCriteria: { Filters: WEBHOOK_DISPATCHER.filters.map((f) => ({ Pattern: JSON.stringify(f) })) },
    });
  });

  test('deliverer: fed by both lanes\' queues with per-message failures, each with its own maximum concurrency; both dead-letter after 5 receives to one queue', () => {
    // However many jobs wait, the deliverer never takes more than these shares of the account's concurrency; a bot
    // whose receiver times out has its jobs on the slow lane, whose few slots are all it can fill.
    const lanes = [
      [ids.queues.webhooks, DEFAULT_CONFIG.webhookConcurrency],
      [ids.queues.webhooks_slow, DEFAULT_CONFIG.webhookSlowConcurrency],
    ] as const;
    for (const [queue, maxConcurrency] of lanes) {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: ids.functions.webhook_deliverer },
        EventSourceArn: { 'Fn::GetAtt': [queue, 'Arn'] },
        BatchSize: WEBHOOK_QUEUE.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: maxConcurrency },
      });
      expect(resources[queue].Properties).toMatchObject({
        VisibilityTimeout: WEBHOOK_QUEUE.visibilityTimeoutSeconds,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [ids.queues.webhooks_dlq, 'Arn'] }, maxReceiveCount: WEBHOOK_QUEUE.maxReceiveCount },
      });
    }
    expect(DEFAULT_CONFIG.webhookSlowConcurrency).toBeLessThan(DEFAULT_CONFIG.webhookConcurrency);
    // Both the dispatcher and the deliverer queue on either lane.
    for (const fn of [ids.functions.webhook_deliverer, ids.functions.webhook_dispatcher]) {
      const env = propsOf<FunctionProps>(resources, fn).Environment!.Variables;
      expect(Object.keys(env)).toEqual(expect.arrayContaining(['WEBHOOK_QUEUE_URL', 'WEBHOOK_SLOW_QUEUE_URL']));
    }
    expect(Object.keys(propsOf<FunctionProps>(resources, ids.functions.webhook_deliverer).Environment!.Variables)).toContain('WEBHOOK_DLQ_URL');
  });
});

test('timeouts: 10 s for request handlers; stream consumers sized to one record at its slowest (a lane sets aside what would not fit); the deliverer within its queue\'s visibility', () => {
  const timeout = (id: string) => propsOf<FunctionProps>(resources, ids.functions[id]).Timeout;
  for (const def of [...ROUTES, ...WS_ROUTES, NOT_FOUND]) expect([def.id, timeout(def.id)]).toEqual([def.id, HANDLER_TIMEOUT_SECONDS]);
  // A lane starts no record once less than its tries at their slowest (and the set-aside after them) are left
  // (lambdas/aws/stream-batch.ts): the timeout holds one whole record, however large the batch. A try makes, one
  // after another, each call bounded by AWS_CALL_SECONDS: the publisher's chat update (up to three writes), the
  // bot's read, a Query, then the posts in parallel; the dispatcher's reminder (chat read, put, delayed job).
  const oneTry = { publisher: 6, webhook_dispatcher: 3 };
  for (const def of [PUBLISHER, WEBHOOK_DISPATCHER]) {
    expect([def.id, timeout(def.id)]).toEqual([def.id, def.timeoutSeconds]);
    // Before the records: the held lanes' read; after them: the set-aside (a write and a send) and the jobs' send.
    const calls = 1 + RECORD_TRIES * oneTry[def.id as keyof typeof oneTry] + 3;
    expect(def.timeoutSeconds).toBeGreaterThanOrEqual(calls * AWS_CALL_SECONDS);
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
