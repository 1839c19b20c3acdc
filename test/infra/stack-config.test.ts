// The stack's settings from CDK context keys: defaults, every key parsed, every bad value refused by name.
import { CONTEXT_KEYS, DEFAULT_CONFIG } from '../../lib/stack-config';
import { configsFromContext } from '../../lib/stack-context';

// What `cdk synth` hands the app besides our keys (feature flags, CDK's own): never mistaken for a typo.
const CDK_CONTEXT = { '@aws-cdk/core:enablePartitionLiterals': true, 'aws:cdk:enable-path-metadata': true };

test('no context: one dev stage with the defaults', () => {
  expect(configsFromContext(CDK_CONTEXT)).toEqual([DEFAULT_CONFIG]);
  expect(DEFAULT_CONFIG).toMatchObject({
    stage: 'dev',
    realtime: true,
    webHosting: true,
    corsOrigins: ['*'],
    throttle: { rateLimit: 200, burstLimit: 400 },
    routeThrottles: {},
    logRetentionDays: 30,
    removalPolicy: 'retain',
    architecture: 'arm64',
    tracing: false,
    wsAccessLogs: false,
    botCacheTtlMs: 30_000,
    chatListShards: 32,
    limits: {},
    streamBatchSize: 100,
    streamBatchingWindowSeconds: 0,
    webhookConcurrency: 100,
    webhookSlowConcurrency: 10,
  });
});

test('every key, as the CLI passes them (strings)', () => {
  const context = {
    ...CDK_CONTEXT,
    stage: 'staging',
    realtime: 'false',
    webHosting: 'false',
    corsOrigins: 'https://shop.example, http://localhost:8080',
    throttleRate: '50',
    throttleBurst: '100',
    routeThrottles: 'POST /api/client/session=1000/2000, $connect=500/1000',
    warmReadUnits: '20000',
    warmWriteUnits: '8000',
    logRetentionDays: '90',
    removalPolicy: 'destroy',
    memorySize: '1024',
    streamConsumerMemorySize: '1769',
    architecture: 'x86_64',
    tracing: 'true',
    wsAccessLogs: 'true',
    alarmEmail: 'ops@shop.example',
    botCacheTtlMs: '0',
    chatListShards: '64',
    limits: 'RATE_MESSAGES_PER_MINUTE=30,MAX_CHATS_PER_USER=0,MAX_UPLOAD_BYTES=209715200',
    streamBatchSize: '1000',
    streamBatchingWindowSeconds: '1',
    webhookConcurrency: '40',
    webhookSlowConcurrency: '4',
  };
  expect(Object.keys(context).filter((k) => !k.includes(':')).sort()).toEqual(CONTEXT_KEYS.filter((k) => k !== 'alarmTopicArn').sort());
  expect(configsFromContext(context)).toEqual([
    {
      stage: 'staging',
      realtime: false,
      webHosting: false,
      corsOrigins: ['https://shop.example', 'http://localhost:8080'],
      throttle: { rateLimit: 50, burstLimit: 100 },
      routeThrottles: { 'POST /api/client/session': { rateLimit: 1000, burstLimit: 2000 }, $connect: { rateLimit: 500, burstLimit: 1000 } },
      warmThroughput: { readUnitsPerSecond: 20000, writeUnitsPerSecond: 8000 },
      logRetentionDays: 90,
      removalPolicy: 'destroy',
      memorySize: 1024,
      streamConsumerMemorySize: 1769,
      architecture: 'x86_64',
      tracing: true,
      wsAccessLogs: true,
      alarmEmail: 'ops@shop.example',
      botCacheTtlMs: 0,
      chatListShards: 64,
      limits: { RATE_MESSAGES_PER_MINUTE: 30, MAX_CHATS_PER_USER: 0, MAX_UPLOAD_BYTES: 200 * 1024 * 1024 },
      streamBatchSize: 1000,
      streamBatchingWindowSeconds: 1,
      webhookConcurrency: 40,
      webhookSlowConcurrency: 4,
    },
  ]);
});

test('native JSON values (cdk.json, tests) work too; one throttle key keeps the other default', () => {
  const [c] = configsFromContext({ realtime: false, memorySize: 256, throttleBurst: 20, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' });
  expect(c).toMatchObject({ realtime: false, memorySize: 256, throttle: { rateLimit: 200, burstLimit: 20 }, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' });
  // One warm throughput key: the other is the table's own.
  expect(configsFromContext({ warmWriteUnits: 10000 })[0].warmThroughput).toEqual({ readUnitsPerSecond: 12000, writeUnitsPerSecond: 10000 });
});

test('stage=staging,prod: one config per stage, same settings', () => {
  const configs = configsFromContext({ stage: 'staging,prod', removalPolicy: 'destroy' });
  expect(configs.map((c) => [c.stage, c.removalPolicy])).toEqual([
    ['staging', 'destroy'],
    ['prod', 'destroy'],
  ]);
});

test.each([
  [{ realtme: 'false' }, /unknown context key realtme; known keys: stage, realtime/],
  [{ stage: 'Prod' }, /stage must be 1-21 lower-case letters/],
  [{ stage: 'prod,prod' }, /names a stage twice/],
  [{ realtime: 'no' }, /context realtime must be true or false, not "no"/],
  [{ tracing: 'yes' }, /context tracing must be true or false/],
  [{ throttleRate: 'fast' }, /context throttleRate must be a whole number, not "fast"/],
  [{ throttleBurst: '0' }, /throttle burst must be a whole number above 0/],
  [{ throttleRate: '1.5' }, /context throttleRate must be a whole number/],
  [{ routeThrottles: 'POST /api/client/session=fast' }, /routeThrottles must be ROUTE KEY=rate\/burst pairs/],
  [{ routeThrottles: 'POST /api/client/sessions=10/20' }, /routeThrottles: no route has the key "POST \/api\/client\/sessions"; route keys: POST \/api\/client\/session/],
  [{ routeThrottles: '$connect=0/20' }, /routeThrottles \$connect: rate must be a whole number of requests per second above 0: 0/],
  [{ warmWriteUnits: '1000' }, /warmWriteUnits must be a whole number of units per second of at least 4000 \(an on-demand table's own\): 1000/],
  [{ warmReadUnits: 'lots' }, /context warmReadUnits must be a whole number, not "lots"/],
  [{ logRetentionDays: '31' }, /logRetentionDays must be one of CloudWatch's values 1, 3, 5, 7, 14, 30/],
  [{ removalPolicy: 'snapshot' }, /removalPolicy must be retain or destroy: "snapshot"/],
  [{ memorySize: '64' }, /memorySize must be a whole number of MB from 128 to 10240: 64/],
  [{ streamConsumerMemorySize: '20000' }, /streamConsumerMemorySize must be a whole number of MB from 128 to 10240: 20000/],
  [{ architecture: 'arm' }, /architecture must be arm64 or x86_64: "arm"/],
  [{ corsOrigins: 'https://shop.example/page' }, /corsOrigins: "https:\/\/shop.example\/page" is not \* or an origin/],
  [{ corsOrigins: '*,https://shop.example' }, /\* already allows every origin/],
  [{ alarmEmail: 'ops' }, /alarmEmail is not an email address: "ops"/],
  [{ alarmTopicArn: 'ops-topic' }, /alarmTopicArn is not an SNS topic ARN/],
  [{ alarmEmail: 'ops@shop.example', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' }, /alarmEmail or alarmTopicArn, not both/],
  [{ botCacheTtlMs: '-1' }, /context botCacheTtlMs must be a whole number/],
  [{ chatListShards: '0' }, /chatListShards must be a whole number from 1 to 1000: 0/],
  [{ chatListShards: '1001' }, /chatListShards must be a whole number from 1 to 1000: 1001/],
  [{ chatListShards: 'many' }, /context chatListShards must be a whole number, not "many"/],
  [{ streamBatchSize: '0' }, /streamBatchSize must be a whole number of records from 1 to 10000: 0/],
  [{ streamBatchSize: '10001' }, /streamBatchSize must be a whole number of records from 1 to 10000/],
  [{ streamBatchingWindowSeconds: '301' }, /streamBatchingWindowSeconds must be a whole number of seconds from 0 to 300: 301/],
  [{ webhookConcurrency: '1' }, /webhookConcurrency must be a whole number from 2 to 1000 \(SQS event source maximum concurrency\): 1/],
  [{ webhookSlowConcurrency: '1001' }, /webhookSlowConcurrency must be a whole number from 2 to 1000/],
  [{ limits: 'RATE_MESSAGES_PER_MINUTE' }, /limits must be NAME=number pairs/],
  [{ limits: 'RATE_EVERYTHING=5' }, /unknown limit RATE_EVERYTHING; known: RATE_MESSAGES_PER_MINUTE/],
  [{ limits: 'MAX_UPLOAD_BYTES=0' }, /MAX_UPLOAD_BYTES must be from 1 to 5368709120 \(S3's 5 GB for one POST\): 0/],
  [{ limits: 'MAX_UPLOAD_BYTES=5368709121' }, /MAX_UPLOAD_BYTES must be from 1 to 5368709120/],
  [{ limits: 'MAX_OPEN_UPLOAD_BYTES=1000' }, /MAX_OPEN_UPLOAD_BYTES must be 0 \(off\) or at least MAX_UPLOAD_BYTES \(104857600\)/],
  [{ limits: 'MAX_UPLOAD_BYTES=1000,MAX_UPLOAD_BYTES_PER_DAY=999' }, /MAX_UPLOAD_BYTES_PER_DAY must be 0 \(off\) or at least MAX_UPLOAD_BYTES \(1000\)/],
])('%o is refused: %s', (context, message) => {
  expect(() => configsFromContext(context)).toThrow(message);
});
