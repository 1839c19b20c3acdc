// CDK assertions: table, bucket, secret, HTTP API routes (one function each) and narrow grants per function.
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ChatStack, DEFAULT_THROTTLE } from '../../lib/stack';
import { NOT_FOUND, PUBLISHER, ROUTES, STREAM_DELIVERY, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE, WS_ROUTES, type FunctionDef } from '../../lib/routes';

// Bundling is skipped here (fast); test/infra/bundle.test.ts bundles every function for real once.
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new ChatStack(app, 'Test');
const template = Template.fromStack(stack);
const resources = template.toJSON().Resources as Record<string, any>;

const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId((construct.node.defaultChild ?? construct) as never);

/** What an event source mapping itself needs, granted to the function's role by CDK. */
const STREAM_CONSUMER_ACTIONS = [
  'dynamodb:DescribeStream',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:ListStreams',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:SendMessage',
];
const SQS_CONSUMER_ACTIONS = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
const SEND_ACTIONS = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];

/** Every action granted to a function's role, across its policies. */
function actionsOf(fnLogicalId: string): { actions: string[]; statements: any[] } {
  const roleId = resources[fnLogicalId].Properties.Role['Fn::GetAtt'][0];
  const statements = Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
  const actions = statements.flatMap((s: any) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
  return { actions: [...new Set(actions)].sort(), statements };
}

test('the table: on-demand, PITR, stream with old and new images, TTL, gsi1, retained', () => {
  template.hasResource('AWS::DynamoDB::Table', {
    DeletionPolicy: 'Retain',
    Properties: {
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

test('the files bucket: private, encrypted, SSL only, CORS for GET, retained', () => {
  template.hasResource('AWS::S3::Bucket', {
    DeletionPolicy: 'Retain',
    Properties: Match.objectLike({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: ['GET', 'HEAD'], AllowedOrigins: ['*'] })] },
    }),
  });
  template.hasResourceProperties('AWS::S3::BucketPolicy', {
    PolicyDocument: {
      Statement: Match.arrayWith([
        Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    },
  });
});

test('HTTP API: CORS for any origin with Authorization and Content-Type; one route per table entry (seven client routes)', () => {
  template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
    ProtocolType: 'HTTP',
    CorsConfiguration: Match.objectLike({
      AllowOrigins: ['*'],
      AllowHeaders: ['authorization', 'content-type'],
      AllowMethods: ['GET', 'POST', 'OPTIONS'],
    }),
  });
  const routeKeys = Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route' && !r.Properties.RouteKey.startsWith('$') && r.Properties.ApiId.Ref === logicalId(stack.api))
    .map((r) => r.Properties.RouteKey)
    .sort();
  expect(routeKeys).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  expect(routeKeys.filter((k) => k.includes('/api/client/'))).toHaveLength(7);
});

test('each route has its own function: Node 22 on arm64, with the table, bucket and secret configured', () => {
  const fnIds = ROUTES.map((r) => logicalId(stack.functions[r.id]));
  expect(new Set(fnIds).size).toBe(ROUTES.length);
  for (const route of ROUTES) {
    const props = resources[logicalId(stack.functions[route.id])].Properties;
    expect(props.Runtime).toBe('nodejs22.x');
    expect(props.Architectures).toEqual(['arm64']);
    const expected = ['BOT_CACHE_TTL_MS', 'BUCKET_NAME', 'NODE_OPTIONS', 'TABLE_NAME'];
    if (route.jwt) expected.push('JWT_SECRET_ARN'); // the Bot API never sees the JWT key
    if (route.id === 'create_session') expected.push('REALTIME_URL'); // only session creation hands out the URL
    expect({ route: route.id, env: Object.keys(props.Environment.Variables).sort() }).toEqual({ route: route.id, env: expected.sort() });
  }
  // Every integration points at a different function.
  const integrationTargets = Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Integration' && r.Properties.IntegrationType === 'AWS_PROXY' && r.Properties.PayloadFormatVersion === '2.0')
    .map((r) => JSON.stringify(r.Properties.IntegrationUri));
  expect(new Set(integrationTargets).size).toBe(ROUTES.length + 1); // + the default route's not-found function
  template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default', ApiId: { Ref: logicalId(stack.api) } });
  template.hasResourceProperties('AWS::ApiGatewayV2::Integration', { PayloadFormatVersion: '2.0' });
});

test('grants are narrow: each function gets exactly the actions its definition lists', () => {
  const secretActions = ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'];
  const defs: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, NOT_FOUND];
  for (const def of defs) {
    const { actions, statements } = actionsOf(logicalId(stack.functions[def.id]));
    const expected = [
      ...new Set([
        ...def.dynamodb.map((a) => `dynamodb:${a}`),
        ...(def.s3 ?? []),
        ...(def.jwt ? secretActions : []),
        ...(def.manageConnections ? ['execute-api:ManageConnections'] : []),
        ...(def.queues?.length ? SEND_ACTIONS : []),
        // Event source mappings read the stream (and send failures to the DLQ) or the queue with the function's role.
        ...('filters' in def ? STREAM_CONSUMER_ACTIONS : []),
        ...(def === WEBHOOK_DELIVERER ? SQS_CONSUMER_ACTIONS : []),
      ]),
    ].sort();
    expect({ fn: def.id, actions }).toEqual({ fn: def.id, actions: expected });
    // No wildcard resources, except dynamodb:ListStreams, which IAM cannot scope to a resource.
    for (const st of statements.filter((x: any) => x.Action !== 'dynamodb:ListStreams')) {
      expect(JSON.stringify(st.Resource)).not.toMatch(/"\*"/);
    }
  }
  // Only the publisher posts to sockets, and only on this API's stage.
  const { statements } = actionsOf(logicalId(stack.functions.publisher));
  const manage = statements.find((st: any) => st.Action === 'execute-api:ManageConnections');
  expect(JSON.stringify(manage.Resource)).toMatch(/\/live\/\*\/@connections\/\*/);
  const listChats = actionsOf(logicalId(stack.functions.list_chats)).actions;
  for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 's3:PutObject']) {
    expect(listChats).not.toContain(write);
  }
});

test('a Secrets Manager secret holds the JWT key; outputs name the API URL, table and bucket', () => {
  template.resourceCountIs('AWS::SecretsManager::Secret', 1);
  template.hasResourceProperties('AWS::SecretsManager::Secret', {
    GenerateSecretString: Match.objectLike({ PasswordLength: 64, ExcludePunctuation: true }),
  });
  const outputs = template.toJSON().Outputs;
  expect(Object.keys(outputs).sort()).toEqual(['ApiUrl', 'BucketName', 'RealtimeUrl', 'TableName']);
});

describe('realtime', () => {
  test('WebSocket API with $connect, $default (route response) and $disconnect, each its own function', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'WEBSOCKET' });
    const routes = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties.ApiId.Ref === logicalId(stack.wsApi!));
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const def = routes.find((r) => r.Properties.RouteKey === '$default');
    expect(def.Properties.RouteResponseSelectionExpression).toBe('$default');
    template.hasResourceProperties('AWS::ApiGatewayV2::RouteResponse', { RouteResponseKey: '$default' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AutoDeploy: true });
    expect(new Set(WS_ROUTES.map((r) => logicalId(stack.functions[r.id]))).size).toBe(3);
  });

  test('publisher: the table stream, filtered, per-record failures, bisect, bounded retries and age, SQS on failure', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.table), 'StreamArn'] },
      FunctionName: { Ref: logicalId(stack.functions.publisher) },
      StartingPosition: 'LATEST',
      BatchSize: STREAM_DELIVERY.batchSize,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_DELIVERY.retryAttempts,
      MaximumRecordAgeInSeconds: STREAM_DELIVERY.maxRecordAgeSeconds,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(stack.publisherDlq!), 'Arn'] } } },
      FilterCriteria: { Filters: PUBLISHER.filters.map((f) => ({ Pattern: JSON.stringify(f) })) },
    });
    const env = resources[logicalId(stack.functions.publisher)].Properties.Environment.Variables;
    expect(env.WS_MANAGEMENT_ENDPOINT).toBeDefined();
    expect(env.JWT_SECRET_ARN).toBeUndefined();
  });

  test('realtime off: no WebSocket API, no publisher, no realtime URL; the HTTP API is whole', () => {
    const offApp = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const off = Template.fromStack(new ChatStack(offApp, 'Off', { realtime: false }));
    off.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    // Only the webhook pipeline stays: its stream dispatcher and its SQS deliverer.
    off.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    off.resourceCountIs('AWS::SQS::Queue', 3);
    off.resourceCountIs('AWS::Lambda::Function', ROUTES.length + 3); // + webhook dispatcher, deliverer, not-found
    off.resourceCountIs('AWS::ApiGatewayV2::Route', ROUTES.length + 1); // + $default
    expect(JSON.stringify(off.toJSON())).not.toContain('REALTIME_URL');
    expect(Object.keys(off.toJSON().Outputs)).not.toContain('RealtimeUrl');
  });
});

describe('webhooks', () => {
  test('dispatcher: the stream, filtered to incoming messages, same failure handling as the publisher', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.functions.webhook_dispatcher) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.table), 'StreamArn'] },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_DELIVERY.retryAttempts,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [logicalId(stack.webhookDispatcherDlq), 'Arn'] } } },
      FilterCriteria: { Filters: WEBHOOK_DISPATCHER.filters.map((f) => ({ Pattern: JSON.stringify(f) })) },
    });
  });

  test('deliverer: fed by the webhook queue with per-message failures; the queue dead-letters after 5 receives', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(stack.functions.webhook_deliverer) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack.queues.webhooks), 'Arn'] },
      BatchSize: WEBHOOK_QUEUE.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: WEBHOOK_QUEUE.visibilityTimeoutSeconds,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack.queues.webhooks_dlq), 'Arn'] }, maxReceiveCount: WEBHOOK_QUEUE.maxReceiveCount },
    });
    const env = resources[logicalId(stack.functions.webhook_deliverer)].Properties.Environment.Variables;
    expect(Object.keys(env)).toEqual(expect.arrayContaining(['WEBHOOK_QUEUE_URL', 'WEBHOOK_DLQ_URL']));
  });
});

describe('abuse limits in the stack', () => {
  test('both APIs are throttled at the stage; limits given as props reach every function', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_THROTTLE.rateLimit, ThrottlingBurstLimit: DEFAULT_THROTTLE.burstLimit },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: 'live',
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_THROTTLE.rateLimit, ThrottlingBurstLimit: DEFAULT_THROTTLE.burstLimit },
    });
    const tuned = Template.fromStack(
      new ChatStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Tuned', {
        throttle: { rateLimit: 10, burstLimit: 20 },
        limits: { RATE_MESSAGES_PER_MINUTE: 30, MAX_CHATS_PER_USER: 5 },
      }),
    );
    tuned.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 } });
    tuned.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ RATE_MESSAGES_PER_MINUTE: '30', MAX_CHATS_PER_USER: '5' }) },
    });
  });
});
