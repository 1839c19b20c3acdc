// CDK assertions: table, bucket, secret, HTTP API routes (one function each), narrow grants per function
// (actions and resources), the settings of lib/stack-config.ts, alarms, cdk-nag, two stages side by side.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ChatStack, DEFAULT_THROTTLE, type ChatStackProps } from '../../lib/stack';
import { configsFromContext, stackName } from '../../lib/stack-config';
import { AWS_CALL_SECONDS, CORS, HANDLER_TIMEOUT_SECONDS, NOT_FOUND, ROUTES, WS_ROUTES, type FunctionDef } from '../../lib/routes';
import { ASYNC_DELIVERY, PUBLISHER, STREAM_DELIVERY, UPLOAD_COMPLETER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE } from '../../lib/consumers';
import { SHAPES } from '../support/shapes';

// Bundling is skipped here (fast); test/infra/bundle.test.ts bundles every function for real once.
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
function build(props: ChatStackProps = {}, id = 'Test') {
  const stack = new ChatStack(new App({ context: NO_BUNDLING }), id, props);
  const template = Template.fromStack(stack);
  return { stack, template, resources: template.toJSON().Resources as Record<string, any> };
}
const { stack, template, resources } = build();

const logicalIdIn = (s: ChatStack) => (construct: { node: { defaultChild?: unknown } }) =>
  s.getLogicalId((construct.node.defaultChild ?? construct) as never);
const logicalId = logicalIdIn(stack);
const ALL_DEFS: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, UPLOAD_COMPLETER, NOT_FOUND];

const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const SECRET_ACTIONS = ['secretsmanager:GetSecretValue'];
const SEND_ACTIONS = ['sqs:SendMessage'];
/** What CDK grants a stream consumer's on-failure destination (Lambda itself sends the failed records there). */
const DESTINATION_ACTIONS = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
/** What an event source mapping itself needs, granted to the function's role by CDK. */
const STREAM_READ_ACTIONS = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
const SQS_CONSUMER_ACTIONS = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
const XRAY_ACTIONS = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

/** A CloudFormation value as a readable string: <Table.Arn>/index/gsi1, <AWS::Region>, *. */
const flat = (v: any): string =>
  typeof v === 'string'
    ? v
    : 'Fn::GetAtt' in v
      ? `<${v['Fn::GetAtt'].join('.')}>`
      : 'Ref' in v
        ? `<${v.Ref}>`
        : 'Fn::Join' in v
          ? v['Fn::Join'][1].map(flat).join(v['Fn::Join'][0])
          : JSON.stringify(v);
const pairs = (actions: string[], ...on: string[]) => actions.flatMap((a) => on.map((r) => `${a} on ${r}`));
const sortedSet = (xs: string[]) => [...new Set(xs)].sort();

/** Every "action on resource" a function's role is granted, across its policies (all Allow). */
function grantsOf(s: ChatStack, res: Record<string, any>, fnId: string): string[] {
  const roleId = res[logicalIdIn(s)(s.functions[fnId])].Properties.Role['Fn::GetAtt'][0];
  expect(res[roleId].Properties.ManagedPolicyArns).toBeUndefined(); // no AWS managed policy (e.g. AWSLambdaBasicExecutionRole)
  const statements = Object.values(res)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: any) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
  expect(statements.every((st: any) => st.Effect === 'Allow' && !st.Condition)).toBe(true);
  return sortedSet(statements.flatMap((st: any) => [st.Action].flat().flatMap((a: string) => [st.Resource].flat().map((r: any) => `${a} on ${flat(r)}`))));
}

/** What a definition says its function may do, on exactly which resources. */
function expectedGrants(s: ChatStack, res: Record<string, any>, def: FunctionDef, tracing: boolean): string[] {
  const id = logicalIdIn(s);
  const table = `<${id(s.table)}.Arn>`;
  const secret = `<${Object.keys(res).find((k) => res[k].Type === 'AWS::SecretsManager::Secret')}>`;
  const streamDlq = def === PUBLISHER ? s.publisherDlq! : s.webhookDispatcherDlq;
  return sortedSet([
    ...pairs(LOG_ACTIONS, `<${id(s.functions[def.id].logGroup as never)}.Arn>`), // its own log group only
    ...pairs(def.dynamodb.map((a) => `dynamodb:${a}`), table, ...(def.index ? [`${table}/index/gsi1`] : [])),
    ...pairs(def.s3 ?? [], `<${id(s.bucket)}.Arn>/bots/*`),
    ...(def.jwt ? pairs(SECRET_ACTIONS, secret) : []),
    ...(def.manageConnections
      ? pairs(['execute-api:ManageConnections'], `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${id(s.wsApi!)}>/live/POST/@connections/*`)
      : []),
    ...(def.queues ?? []).flatMap((q) => pairs(SEND_ACTIONS, `<${id(s.queues[q])}.Arn>`)),
    // Event source mappings read the stream (ListStreams cannot be scoped) and send failures to the DLQ...
    ...('filters' in def
      ? [...pairs(STREAM_READ_ACTIONS, `<${id(s.table)}.StreamArn>`), 'dynamodb:ListStreams on *', ...pairs(DESTINATION_ACTIONS, `<${id(streamDlq)}.Arn>`)]
      : []),
    // S3 invokes the upload completer asynchronously; Lambda sends what failed every retry to its queue.
    ...(def === UPLOAD_COMPLETER ? pairs(DESTINATION_ACTIONS, `<${id(s.uploadCompleterDlq)}.Arn>`) : []),
    // ...or consume the queue, with the function's role.
    ...(def === WEBHOOK_DELIVERER ? pairs(SQS_CONSUMER_ACTIONS, `<${id(s.queues.webhooks)}.Arn>`) : []),
    ...(tracing ? pairs(XRAY_ACTIONS, '*') : []), // X-Ray has no resource-level permissions
  ]);
}

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
  const completer = logicalId(stack.functions[UPLOAD_COMPLETER.id]);
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
      AllowMethods: ['GET', 'POST', 'PATCH', 'OPTIONS'],
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
  const routeKeys = Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route' && !r.Properties.RouteKey.startsWith('$') && r.Properties.ApiId.Ref === logicalId(stack.api))
    .map((r) => r.Properties.RouteKey)
    .sort();
  expect(routeKeys).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  expect(routeKeys.filter((k) => k.includes('/api/client/'))).toHaveLength(9);
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

describe('least privilege', () => {
  test('each function gets exactly the actions its definition lists, on exactly its resources', () => {
    for (const def of ALL_DEFS) {
      expect({ fn: def.id, grants: grantsOf(stack, resources, def.id) }).toEqual({ fn: def.id, grants: expectedGrants(stack, resources, def, false) });
    }
    // Only the publisher posts to sockets; list_chats writes nothing.
    for (const def of ALL_DEFS.filter((d) => d !== PUBLISHER)) {
      expect(grantsOf(stack, resources, def.id).join('\n')).not.toContain('execute-api:');
    }
    for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 's3:PutObject']) {
      expect(grantsOf(stack, resources, 'list_chats').join('\n')).not.toContain(write);
    }
    for (const def of ALL_DEFS) expect(resources[logicalId(stack.functions[def.id])].Properties.TracingConfig).toBeUndefined();
  });

  test('X-Ray on: every function traces, and gains only xray:Put* (on *, X-Ray has no resources)', () => {
    const traced = build({ tracing: true });
    for (const def of ALL_DEFS) {
      const fn = traced.resources[logicalIdIn(traced.stack)(traced.stack.functions[def.id])];
      expect({ fn: def.id, tracing: fn.Properties.TracingConfig }).toEqual({ fn: def.id, tracing: { Mode: 'Active' } });
      expect({ fn: def.id, grants: grantsOf(traced.stack, traced.resources, def.id) }).toEqual({
        fn: def.id,
        grants: expectedGrants(traced.stack, traced.resources, def, true),
      });
    }
  });
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
      // Chats' counters follow from its records, so it skips none; one batch per shard keeps order.
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: PUBLISHER.batchSize,
      ParallelizationFactor: 1,
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
    off.resourceCountIs('AWS::SQS::Queue', 4);
    // + webhook dispatcher, deliverer, upload completer, not-found, and S3's notification handler (CDK's own)
    off.resourceCountIs('AWS::Lambda::Function', ROUTES.length + 5);
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
      // Nothing written while the mapping is created or replaced is skipped; a repeat is deduped by receivers.
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: WEBHOOK_DISPATCHER.batchSize,
      ParallelizationFactor: 1,
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

test('timeouts: 10 s for request handlers; stream consumers sized to a whole batch at its slowest; the deliverer within its queue\'s visibility', () => {
  const timeout = (id: string) => resources[logicalId(stack.functions[id])].Properties.Timeout;
  for (const def of [...ROUTES, ...WS_ROUTES, NOT_FOUND]) expect([def.id, timeout(def.id)]).toEqual([def.id, HANDLER_TIMEOUT_SECONDS]);
  // AWS calls made one after another per batch, each bounded by AWS_CALL_SECONDS (lib/routes.ts says why):
  // the publisher's records of one user go in turn, each a Query then the posts in parallel; the dispatcher
  // reads each record's bot, then sends the jobs 10 per SendMessageBatch.
  const sequentialCalls = { publisher: (n: number) => 4 * n, webhook_dispatcher: (n: number) => n + Math.ceil(n / 10) };
  for (const def of [PUBLISHER, WEBHOOK_DISPATCHER]) {
    expect([def.id, timeout(def.id)]).toEqual([def.id, def.timeoutSeconds]);
    expect(def.timeoutSeconds).toBeGreaterThanOrEqual(sequentialCalls[def.id as keyof typeof sequentialCalls](def.batchSize) * AWS_CALL_SECONDS);
    expect(def.timeoutSeconds).toBeLessThanOrEqual(900); // Lambda's maximum
  }
  // Lambda refuses an SQS mapping whose queue hides a message for less time than the function may run.
  expect(timeout('webhook_deliverer')).toBe(WEBHOOK_DELIVERER.timeoutSeconds);
  expect(WEBHOOK_QUEUE.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(WEBHOOK_DELIVERER.timeoutSeconds!);
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

describe('settings (lib/stack-config.ts)', () => {
  test('defaults: retained data, 30-day logs, arm64 at 512 MB, HTTP access logs on, WebSocket access logs off', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    expect(Object.values(template.findResources('AWS::S3::Bucket')).map((b) => b.DeletionPolicy)).toEqual(['Retain', 'Retain']);
    // What holds data stays with the table: the dead letters (not the live webhook queue) and the JWT key.
    const policyOf = (x: { node: { defaultChild?: unknown } }) => resources[logicalId(x)].DeletionPolicy;
    const dlqs = [stack.queues.webhooks_dlq, stack.webhookDispatcherDlq, stack.publisherDlq!];
    expect(dlqs.map(policyOf)).toEqual(['Retain', 'Retain', 'Retain']);
    expect(policyOf(stack.queues.webhooks)).toBe('Delete');
    template.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    template.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    expect(logGroups.length).toBe(ALL_DEFS.length + 1); // one per function + the HTTP API's access logs
    for (const lg of logGroups) expect(lg.Properties.RetentionInDays).toBe(30);
    for (const def of ALL_DEFS) {
      const props = resources[logicalId(stack.functions[def.id])].Properties;
      // Per function: 512 MB for requests, 256 for the stream, queue and S3 event consumers (mostly waiting on I/O).
      expect([def.id, props.MemorySize, props.Architectures]).toEqual([def.id, 'filters' in def || def === WEBHOOK_DELIVERER || def === UPLOAD_COMPLETER ? 256 : 512, ['arm64']]);
      // JSON lines; Lambda's START/END/REPORT lines off (LAMBDA_LOGGING).
      expect([def.id, props.LoggingConfig]).toEqual([def.id, { LogFormat: 'JSON', SystemLogLevel: 'WARN', ApplicationLogLevel: 'INFO', LogGroup: expect.anything() }]);
    }
    const httpStage = template.findResources('AWS::ApiGatewayV2::Stage', { Properties: { StageName: '$default' } });
    const { AccessLogSettings } = Object.values(httpStage)[0].Properties;
    expect(JSON.parse(AccessLogSettings.Format)).toMatchObject({ requestId: '$context.requestId', routeKey: '$context.routeKey', status: '$context.status' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AccessLogSettings: Match.absent() });
    // The files bucket logs its accesses to the log bucket, which S3 may write to under a bucket policy (no ACLs).
    template.hasResourceProperties('AWS::S3::Bucket', { LoggingConfiguration: { DestinationBucketName: { Ref: logicalId(stack.accessLogsBucket) }, LogFilePrefix: 'files/' } });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logicalId(stack.accessLogsBucket) },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' })]) },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      Tags: Match.arrayWith([{ Key: 'stage', Value: 'dev' }]),
      LifecycleConfiguration: { Rules: [{ ExpirationInDays: 30, Status: 'Enabled' }] },
    });
  });

  test('every setting reaches the resources it names', () => {
    // The shape cfn-lint also checks (test/support/shapes.ts): every setting given.
    const tuned = build(SHAPES.EverySetting);
    const t = tuned.template;
    t.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({ AllowOrigins: ['https://shop.example', 'http://localhost:8080'] }),
    });
    t.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedOrigins: ['https://shop.example', 'http://localhost:8080'] })] },
    });
    for (const lg of Object.values(t.findResources('AWS::Logs::LogGroup'))) expect(lg.Properties.RetentionInDays).toBe(7);
    t.resourceCountIs('AWS::Logs::LogGroup', ALL_DEFS.length + 2); // + both APIs' access logs
    t.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AccessLogSettings: Match.objectLike({ Format: Match.stringLikeRegexp('connectionId') }) });
    // A throwaway stage: table and buckets go with the stack, the buckets emptied first.
    t.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
    const s = tuned.stack;
    for (const q of [s.queues.webhooks_dlq, s.webhookDispatcherDlq, s.publisherDlq!, s.uploadCompleterDlq]) expect(tuned.resources[logicalIdIn(s)(q)].DeletionPolicy).toBe('Delete');
    t.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Delete' });
    expect(Object.values(t.findResources('AWS::S3::Bucket')).map((b) => b.DeletionPolicy)).toEqual(['Delete', 'Delete']);
    t.resourceCountIs('Custom::S3AutoDeleteObjects', 2);
    for (const def of ALL_DEFS) {
      const props = tuned.resources[logicalIdIn(tuned.stack)(tuned.stack.functions[def.id])].Properties;
      expect([def.id, props.MemorySize, props.Architectures]).toEqual([def.id, 1024, ['x86_64']]);
      if (def !== NOT_FOUND) expect(props.Environment.Variables.BOT_CACHE_TTL_MS).toBe('0');
    }
    t.hasResourceProperties('AWS::S3::Bucket', { Tags: Match.arrayWith([{ Key: 'stage', Value: 'staging' }]) });
  });

  test('bad props fail with the same messages as bad context keys', () => {
    expect(() => new ChatStack(new App({ context: NO_BUNDLING }), 'Bad', { memorySize: 64 })).toThrow(/memorySize must be a whole number of MB from 128 to 10240: 64/);
    expect(() => new ChatStack(new App({ context: NO_BUNDLING }), 'Bad', { corsOrigins: ['shop.example'] })).toThrow(/corsOrigins: "shop.example" is not \* or an origin/);
  });
});

describe('alarms', () => {
  const alarmsOf = (t: Template) => Object.entries(t.findResources('AWS::CloudWatch::Alarm'));

  test('per function errors, throttles and duration near the timeout; stream iterator age and reported failures; HTTP API 5xx rate; WebSocket execution errors; DynamoDB throttles and system errors; dead-letter depth and the oldest webhook job; no topic by default', () => {
    const alarms = alarmsOf(template);
    const byMetric = (name: string) => alarms.filter(([, a]) => a.Properties.MetricName === name);
    const fnRefs = (xs: typeof alarms) => xs.map(([, a]) => a.Properties.Dimensions[0].Value.Ref).sort();
    const allFns = ALL_DEFS.map((d) => logicalId(stack.functions[d.id])).sort();
    expect(fnRefs(byMetric('Errors'))).toEqual(allFns);
    expect(fnRefs(byMetric('Throttles'))).toEqual(allFns);
    expect(fnRefs(byMetric('IteratorAge'))).toEqual([logicalId(stack.functions.publisher), logicalId(stack.functions.webhook_dispatcher)].sort());
    for (const [, a] of byMetric('IteratorAge')) expect(a.Properties).toMatchObject({ Statistic: 'Maximum', Threshold: 60_000 });
    const dlqs = byMetric('ApproximateNumberOfMessagesVisible').map(([, a]) => a.Properties.Dimensions[0].Value['Fn::GetAtt'][0]).sort();
    expect(dlqs).toEqual([stack.queues.webhooks_dlq, stack.webhookDispatcherDlq, stack.publisherDlq!, stack.uploadCompleterDlq].map(logicalId).sort());
    const rate = alarms.filter(([, a]) => a.Properties.Metrics?.some((m: any) => m.MetricStat?.Metric.Namespace === 'AWS/ApiGateway'));
    expect(rate).toHaveLength(1);
    expect(rate[0][1].Properties).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(rate[0][1].Properties.Metrics.map((m: any) => m.MetricStat?.Metric.MetricName).filter(Boolean).sort()).toEqual(['5xx', 'Count']);
    // Duration near the timeout: 80 % of each function's own.
    const near = byMetric('Duration');
    expect(fnRefs(near)).toEqual(allFns);
    for (const def of ALL_DEFS) {
      const [, a] = near.find(([, x]) => x.Properties.Dimensions[0].Value.Ref === logicalId(stack.functions[def.id]))!;
      const timeoutS = resources[logicalId(stack.functions[def.id])].Properties.Timeout;
      expect([def.id, a.Properties.Statistic, a.Properties.Threshold]).toEqual([def.id, 'Maximum', 800 * timeoutS]);
    }
    // Partial-batch failures: a metric filter on each stream consumer's log group counts the line its handler
    // writes on each reported failure (the line is in the handler's source, so a reworded one fails here).
    for (const def of [PUBLISHER, WEBHOOK_DISPATCHER]) {
      expect(readFileSync(join(__dirname, '../..', def.entry), 'utf8')).toContain(`'${def.failureLog}'`);
      template.hasResourceProperties('AWS::Logs::MetricFilter', {
        LogGroupName: { Ref: logicalId(stack.functions[def.id].logGroup as never) },
        FilterPattern: `{ $.message = "${def.failureLog}" }`,
        MetricTransformations: [Match.objectLike({ MetricNamespace: 'ChatBot/dev', MetricValue: '1', DefaultValue: Match.absent() })],
      });
      const [, a] = byMetric(`${def.id === 'publisher' ? 'Publisher' : 'WebhookDispatcher'}BatchItemFailures`)[0];
      expect(a.Properties).toMatchObject({ Namespace: 'ChatBot/dev', Statistic: 'Sum', Threshold: 1 });
    }
    // The oldest webhook job, past the longest retry delay (15 min) twice over.
    const [, oldest] = byMetric('ApproximateAgeOfOldestMessage')[0];
    expect(oldest.Properties).toMatchObject({ Statistic: 'Maximum', Threshold: 1800, Dimensions: [{ Value: { 'Fn::GetAtt': [logicalId(stack.queues.webhooks), 'QueueName'] } }] });
    // WebSocket API: integrations API Gateway failed to run.
    const [, ws] = byMetric('ExecutionError')[0];
    expect(ws.Properties).toMatchObject({ Namespace: 'AWS/ApiGateway', Statistic: 'Sum', Threshold: 1 });
    expect(ws.Properties.Dimensions).toEqual([
      { Name: 'ApiId', Value: { Ref: logicalId(stack.wsApi!) } },
      { Name: 'Stage', Value: 'live' },
    ]);
    // DynamoDB: throttled requests and system errors, summed over every operation the functions make.
    const math = alarms.filter(([, a]) => a.Properties.Metrics);
    const tableAlarm = (name: string) =>
      math.filter(([, a]) => a.Properties.Metrics.some((m: any) => m.MetricStat?.Metric.MetricName === name && m.MetricStat.Metric.Namespace === 'AWS/DynamoDB'));
    for (const name of ['ThrottledRequests', 'SystemErrors']) {
      const [[, a], ...more] = tableAlarm(name);
      expect(more).toEqual([]);
      const ops = a.Properties.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric.Dimensions.find((d: any) => d.Name === 'Operation').Value);
      expect([name, ops.sort()]).toEqual([name, ['BatchGetItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'TransactWriteItems', 'UpdateItem']]);
      expect(a.Properties.Threshold).toBe(1);
    }
    expect(alarms).toHaveLength(3 * ALL_DEFS.length + 2 * 2 + 1 + 4 + 1 + 1 + 2);
    for (const [, a] of alarms) {
      expect(a.Properties.TreatMissingData).toBe('notBreaching');
      expect(a.Properties.AlarmActions).toBeUndefined();
    }
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  test('alarmEmail: a topic of our own (SSL only) with the address subscribed, on alarm and on recovery', () => {
    const { template: t, stack: s } = build({ alarmEmail: 'ops@shop.example' });
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@shop.example' });
    t.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const topic = { Ref: logicalIdIn(s)(s.alarmTopic as never) };
    for (const [, a] of alarmsOf(t)) expect(a.Properties).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
  });

  test('alarmTopicArn: an existing topic; realtime off: no publisher alarms', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops';
    const { template: t } = build({ alarmTopicArn: arn, realtime: false });
    t.resourceCountIs('AWS::SNS::Topic', 0);
    const alarms = alarmsOf(t);
    for (const [, a] of alarms) expect(a.Properties.AlarmActions).toEqual([arn]);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'IteratorAge')).toHaveLength(1);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible')).toHaveLength(3);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'ExecutionError')).toHaveLength(0);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'PublisherBatchItemFailures')).toHaveLength(0);
  });

  test('docs/deploy.md "What it costs" states the alarm count and their monthly cost (CloudWatch bills each metric an alarm reads)', () => {
    const readme = readFileSync(join(__dirname, '../../docs/deploy.md'), 'utf8');
    const count = (t: Template) => {
      const alarms = alarmsOf(t);
      const metrics = alarms.reduce((n, [, a]) => n + (a.Properties.Metrics ? a.Properties.Metrics.filter((m: any) => m.MetricStat).length : 1), 0);
      return { alarms: alarms.length, metrics, dollars: (metrics * 0.1).toFixed(2) };
    };
    const on = count(template);
    const off = count(build({ realtime: false }).template);
    const stated = /\*\*At rest\*\*[^]*?the (\d+) alarms \((\d+) alarm metrics, \$(\d+\.\d\d)\)[^]*?realtime off: (\d+) alarms, (\d+) alarm metrics, \$(\d+\.\d\d)/.exec(readme);
    expect(stated && stated.slice(1).map(String)).toEqual([on.alarms, on.metrics, on.dollars, off.alarms, off.metrics, off.dollars].map(String));
  });
});

describe('cdk-nag AwsSolutions', () => {
  const configs: Record<string, ChatStackProps> = {
    defaults: {},
    'every option on': { tracing: true, removalPolicy: 'destroy', alarmEmail: 'ops@shop.example', wsAccessLogs: true, architecture: 'x86_64' },
    'realtime off, an existing topic, a known region': { realtime: false, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', env: { region: 'eu-west-1' } },
  };

  test.each(Object.entries(configs))('%s: no finding (error or warning) left unacknowledged, no CDK warning either', (_name, props) => {
    const { stack: s } = build(props);
    const report = new AwsSolutionsChecks().validateScope(s);
    expect(report.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    const annotations = Annotations.fromStack(s);
    expect([...annotations.findWarning('*', Match.anyValue()), ...annotations.findError('*', Match.anyValue())]).toEqual([]);
  });

  test.each(Object.entries(configs))('%s: every acknowledgement has a one-line reason and silences a real finding', (_name, props) => {
    // Record the acknowledgements instead of applying them (CDK's method, not ours), to see what each one hides.
    const acks: { path: string; id: string; reason: string }[] = [];
    const spy = jest.spyOn(Validations.prototype, 'acknowledge').mockImplementation(function (this: any, ...rules) {
      for (const r of rules) acks.push({ path: this.scope.node.path, id: r.id, reason: r.reason });
    });
    let violations;
    try {
      violations = new AwsSolutionsChecks().validateScope(build(props).stack).violations;
    } finally {
      spy.mockRestore();
    }
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.reason).toMatch(/^[^\n]{20,200}$/);
      const hidden = violations.find((v) => v.ruleName === ack.id && v.violatingResources.some((r) => r.constructPath?.startsWith(`${ack.path}/`)));
      expect({ ...ack, hides: hidden ? 'a finding' : 'nothing' }).toEqual({ ...ack, hides: 'a finding' });
    }
  });
});

test('two stages synthesize side by side in one app (context stage=staging,prod), cdk-nag on, no fixed names', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-stages-'));
  try {
    const app = new App({ outdir, context: { ...NO_BUNDLING, stage: 'staging,prod', removalPolicy: 'destroy' } });
    for (const config of configsFromContext(app.node.getAllContext())) new ChatStack(app, stackName(config.stage), config);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app)); // as bin/app.ts: a finding would stop synth
    app.synth();
    const templates = readdirSync(outdir).filter((f) => f.endsWith('.template.json')).sort();
    expect(templates).toEqual(['ChatBot-prod.template.json', 'ChatBot-staging.template.json']);
    // Physical names are generated per stack (stack name + logical id): no resource may pin one.
    // (An HTTP API's Name and an inline policy's PolicyName are labels inside their API or role, not global.)
    const NAME_PROPS = ['TableName', 'BucketName', 'FunctionName', 'QueueName', 'TopicName', 'LogGroupName', 'AlarmName', 'RoleName', 'SecretName', 'Name'];
    for (const file of templates) {
      const res = JSON.parse(readFileSync(join(outdir, file), 'utf8')).Resources as Record<string, any>;
      const pinned = Object.entries(res).flatMap(([id, r]) =>
        NAME_PROPS.filter((p) => typeof r.Properties?.[p] === 'string' && r.Type !== 'AWS::ApiGatewayV2::Api').map((p) => `${id}.${p}`),
      );
      expect({ file, pinned }).toEqual({ file, pinned: [] });
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
});
