// CDK assertions on the settings of lib/stack-config.ts: throttles and limits, the defaults, every setting given, bad props refused.
import { Match, Template } from 'aws-cdk-lib/assertions';
import { loadShape } from '../support/cdk-template';
import { logicalIds, REFUSED_PROPS, refusals, template as shape, type StackIds } from '../support/shapes';
import { DEFAULT_THROTTLE } from '../../lib/stack-config';
import { ALL_FUNCTIONS, TASK_WORKER, UPLOAD_COMPLETER, WEBHOOK_DELIVERER } from '../../lib/consumers';
import { ofType, propsOf, resourcesOf, valuesOfType, type FunctionProps, type LogGroupProps, type Resources, type StageProps } from './cfn';

const ALL_DEFS = ALL_FUNCTIONS;

let template: Template;
let resources: Resources;
let ids: StackIds;
beforeAll(async () => {
  ({ template, ids } = await loadShape('Defaults'));
  resources = resourcesOf(template);
});

describe('abuse limits in the stack', () => {
  test('both APIs are throttled at the stage; limits given as props reach every function', async () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_THROTTLE.rateLimit, ThrottlingBurstLimit: DEFAULT_THROTTLE.burstLimit },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: 'live',
      DefaultRouteSettings: { ThrottlingRateLimit: DEFAULT_THROTTLE.rateLimit, ThrottlingBurstLimit: DEFAULT_THROTTLE.burstLimit },
    });
    // The every-setting shape (test/support/shapes.ts): throttle 10/20, three limits.
    const tuned = Template.fromJSON(await shape('EverySetting'));
    tuned.hasResourceProperties('AWS::ApiGatewayV2::Stage', { DefaultRouteSettings: { ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 } });
    // Route throttles, each on the stage of its API, the stage made after its route; none by default.
    const routeSettings = (t: Template) => Object.fromEntries(ofType<StageProps & { RouteSettings?: unknown }>(t, 'AWS::ApiGatewayV2::Stage').map(([, st]) => [st.Properties.StageName, st.Properties.RouteSettings]));
    expect(routeSettings(template)).toEqual({ $default: undefined, live: undefined });
    expect(routeSettings(tuned)).toEqual({
      $default: { 'POST /api/client/session': { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 8 } },
      live: { $connect: { ThrottlingRateLimit: 3, ThrottlingBurstLimit: 6 } },
    });
    const stageDependsOn = (key: string) => {
      const [[id]] = ofType(tuned, 'AWS::ApiGatewayV2::Route', { Properties: { RouteKey: key } });
      return ofType<StageProps>(tuned, 'AWS::ApiGatewayV2::Stage').some(([, st]) => st.DependsOn?.includes(id));
    };
    expect([stageDependsOn('POST /api/client/session'), stageDependsOn('$connect')]).toEqual([true, true]);
    // The table's warm throughput: given, or none (DynamoDB's own).
    tuned.hasResourceProperties('AWS::DynamoDB::Table', { WarmThroughput: { ReadUnitsPerSecond: 15000, WriteUnitsPerSecond: 6000 } });
    template.hasResourceProperties('AWS::DynamoDB::Table', { WarmThroughput: Match.absent() });
    tuned.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ RATE_MESSAGES_PER_MINUTE: '30', MAX_CHATS_PER_USER: '5', MAX_UPLOAD_BYTES: '1073741824' }) },
    });    // The deliverer's maximum concurrency on each lane's queue.
    tuned.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 20 } });
    tuned.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 3 } });
  });
});

describe('settings (lib/stack-config.ts)', () => {
  test('defaults: retained data, 30-day logs, arm64 at 512 MB, HTTP access logs on, WebSocket access logs off', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    // The files and their access logs; the web bucket holds only what each deploy writes, and goes with the stack.
    const buckets = [ids.accessLogsBucket, ids.bucket, ids.web!.bucket];
    expect(valuesOfType(template, 'AWS::S3::Bucket')).toHaveLength(buckets.length);
    expect(buckets.map((b) => resources[b].DeletionPolicy)).toEqual(['Retain', 'Retain', 'Delete']);
    // What holds data stays with the table: the dead letters (not the live webhook queue) and the JWT key.
    const policyOf = (id: string) => resources[id]?.DeletionPolicy;
    const dlqs = [ids.queues.webhooks_dlq, ids.webhookDispatcherDlq, ids.publisherDlq!, ids.uploadCompleterDlq];
    expect(dlqs.map(policyOf)).toEqual(['Retain', 'Retain', 'Retain', 'Retain']);
    expect(policyOf(ids.queues.webhooks)).toBe('Delete');
    template.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    template.resourceCountIs('Custom::S3AutoDeleteObjects', 0);
    const logGroups = valuesOfType<LogGroupProps>(template, 'AWS::Logs::LogGroup');
    expect(logGroups.length).toBe(ALL_DEFS.length + 1); // one per function + the HTTP API's access logs
    for (const lg of logGroups) expect(lg.Properties.RetentionInDays).toBe(30);
    for (const def of ALL_DEFS) {
      const props = propsOf<FunctionProps>(resources, ids.functions[def.id]);
      // Per function: 512 MB for requests, 256 for the stream, queue and S3 event consumers (mostly waiting on I/O).
      expect([def.id, props.MemorySize, props.Architectures]).toEqual([def.id, 'filters' in def || def === WEBHOOK_DELIVERER || def === UPLOAD_COMPLETER || def === TASK_WORKER ? 256 : 512, ['arm64']]);
      // JSON lines; Lambda's START/END/REPORT lines off (LAMBDA_LOGGING).
      expect([def.id, props.LoggingConfig]).toEqual([def.id, { LogFormat: 'JSON', SystemLogLevel: 'WARN', ApplicationLogLevel: 'INFO', LogGroup: expect.anything() }]);
    }
    const [[, httpStage]] = ofType<StageProps>(template, 'AWS::ApiGatewayV2::Stage', { Properties: { StageName: '$default' } });
    const { AccessLogSettings } = httpStage.Properties;
    expect(JSON.parse(AccessLogSettings!.Format)).toMatchObject({ requestId: '$context.requestId', routeKey: '$context.routeKey', status: '$context.status' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AccessLogSettings: Match.absent() });
    // The files bucket logs its accesses to the log bucket, which S3 may write to under a bucket policy (no ACLs).
    template.hasResourceProperties('AWS::S3::Bucket', { LoggingConfiguration: { DestinationBucketName: { Ref: ids.accessLogsBucket }, LogFilePrefix: 'files/' } });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: ids.accessLogsBucket },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' })]) },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      Tags: Match.arrayWith([{ Key: 'stage', Value: 'dev' }]),
      LifecycleConfiguration: { Rules: [{ ExpirationInDays: 30, Status: 'Enabled' }] },
    });
  });

  test('every setting reaches the resources it names', async () => {
    // The shape cfn-lint also checks (test/support/shapes.ts): every setting given.
    const t = Template.fromJSON(await shape('EverySetting'));
    const tuned = { resources: resourcesOf(t), ids: await logicalIds('EverySetting') };
    // The origins given, and the hosted chat page's (the distribution's), which calls the API and reads files.
    const hosted = { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [tuned.ids.web!.distribution, 'DomainName'] }]] };
    t.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({ AllowOrigins: ['https://shop.example', 'http://localhost:8080', hosted] }),
    });
    t.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedOrigins: ['https://shop.example', 'http://localhost:8080', hosted] })] },
    });
    for (const lg of valuesOfType<LogGroupProps>(t, 'AWS::Logs::LogGroup')) expect(lg.Properties.RetentionInDays).toBe(7);
    t.resourceCountIs('AWS::Logs::LogGroup', ALL_DEFS.length + 2); // + both APIs' access logs
    t.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'live', AccessLogSettings: Match.objectLike({ Format: Match.stringLikeRegexp('connectionId') }) });
    // A throwaway stage: table and buckets go with the stack, the buckets emptied first.
    t.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: Match.objectLike({ DeletionProtectionEnabled: false }) });
    const s = tuned.ids;
    for (const q of [s.queues.webhooks_dlq, s.webhookDispatcherDlq, s.publisherDlq!, s.uploadCompleterDlq]) expect(tuned.resources[q]?.DeletionPolicy).toBe('Delete');
    t.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Delete' });
    expect(valuesOfType(t, 'AWS::S3::Bucket').map((b) => b.DeletionPolicy)).toEqual(['Delete', 'Delete', 'Delete']);
    t.resourceCountIs('Custom::S3AutoDeleteObjects', 2);
    for (const def of ALL_DEFS) {
      const props = propsOf<FunctionProps>(tuned.resources, tuned.ids.functions[def.id]);
      // The stream consumers at their own setting (streamConsumerMemorySize), over memorySize.
      expect([def.id, props.MemorySize, props.Architectures]).toEqual([def.id, 'filters' in def ? 1769 : 1024, ['x86_64']]);
      expect(props.Environment?.Variables.BOT_CACHE_TTL_MS).toBe('0');
      expect(props.Environment?.Variables.CHAT_LIST_SHARDS).toBe('64');
    }
    t.hasResourceProperties('AWS::S3::Bucket', { Tags: Match.arrayWith([{ Key: 'stage', Value: 'staging' }]) });
    // Both stream consumers take the stage's batches: still one at a time per shard.
    for (const fn of [s.functions.publisher, s.functions.webhook_dispatcher]) {
      t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: fn },
        EventSourceArn: Match.objectLike({ 'Fn::GetAtt': Match.arrayWith(['StreamArn']) }),
        BatchSize: 500,
        MaximumBatchingWindowInSeconds: 2,
        ParallelizationFactor: 1,
      });
    }
  });

  test('bad props fail with the same messages as bad context keys', async () => {
    // `new ChatStack` with each of these props, tried in the run's synth (test/support/synth-shapes.ts).
    expect(REFUSED_PROPS).toEqual({ memorySize: { memorySize: 64 }, corsOrigins: { corsOrigins: ['shop.example'] } });
    const refused = await refusals();
    expect(refused.memorySize).toMatch(/memorySize must be a whole number of MB from 128 to 10240: 64/);
    expect(refused.corsOrigins).toMatch(/corsOrigins: "shop.example" is not \* or an origin/);
  });
});

test("no stage sets WEBHOOK_ALLOW_LOOPBACK: the local stack's setting never reaches a deployed function", async () => {
  const tuned = Template.fromJSON(await shape('EverySetting'));
  const fns = [template, tuned].flatMap((t) => valuesOfType<FunctionProps>(t, 'AWS::Lambda::Function'));
  expect(fns.length).toBeGreaterThan(10);
  expect(fns.filter((f) => 'WEBHOOK_ALLOW_LOOPBACK' in (f.Properties.Environment?.Variables ?? {}))).toEqual([]);
});
