// The stack's settings from CDK context keys: defaults, every key parsed, every bad value refused by name.
import { CONTEXT_KEYS, DEFAULT_CONFIG, configsFromContext } from '../../lib/stack-config';

// What `cdk synth` hands the app besides our keys (feature flags, CDK's own): never mistaken for a typo.
const CDK_CONTEXT = { '@aws-cdk/core:enablePartitionLiterals': true, 'aws:cdk:enable-path-metadata': true };

test('no context: one dev stage with the defaults', () => {
  expect(configsFromContext(CDK_CONTEXT)).toEqual([DEFAULT_CONFIG]);
  expect(DEFAULT_CONFIG).toMatchObject({
    stage: 'dev',
    realtime: true,
    corsOrigins: ['*'],
    throttle: { rateLimit: 200, burstLimit: 400 },
    logRetentionDays: 30,
    removalPolicy: 'retain',
    architecture: 'arm64',
    tracing: false,
    wsAccessLogs: false,
    botCacheTtlMs: 30_000,
    limits: {},
  });
});

test('every key, as the CLI passes them (strings)', () => {
  const context = {
    ...CDK_CONTEXT,
    stage: 'staging',
    realtime: 'false',
    corsOrigins: 'https://shop.example, http://localhost:8080',
    throttleRate: '50',
    throttleBurst: '100',
    logRetentionDays: '90',
    removalPolicy: 'destroy',
    memorySize: '1024',
    architecture: 'x86_64',
    tracing: 'true',
    wsAccessLogs: 'true',
    alarmEmail: 'ops@shop.example',
    botCacheTtlMs: '0',
    limits: 'RATE_MESSAGES_PER_MINUTE=30,MAX_CHATS_PER_USER=0,MAX_UPLOAD_BYTES=209715200',
  };
  expect(Object.keys(context).filter((k) => !k.includes(':')).sort()).toEqual(CONTEXT_KEYS.filter((k) => k !== 'alarmTopicArn').sort());
  expect(configsFromContext(context)).toEqual([
    {
      stage: 'staging',
      realtime: false,
      corsOrigins: ['https://shop.example', 'http://localhost:8080'],
      throttle: { rateLimit: 50, burstLimit: 100 },
      logRetentionDays: 90,
      removalPolicy: 'destroy',
      memorySize: 1024,
      architecture: 'x86_64',
      tracing: true,
      wsAccessLogs: true,
      alarmEmail: 'ops@shop.example',
      botCacheTtlMs: 0,
      limits: { RATE_MESSAGES_PER_MINUTE: 30, MAX_CHATS_PER_USER: 0, MAX_UPLOAD_BYTES: 200 * 1024 * 1024 },
    },
  ]);
});

test('native JSON values (cdk.json, tests) work too; one throttle key keeps the other default', () => {
  const [c] = configsFromContext({ realtime: false, memorySize: 256, throttleBurst: 20, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' });
  expect(c).toMatchObject({ realtime: false, memorySize: 256, throttle: { rateLimit: 200, burstLimit: 20 }, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' });
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
  [{ logRetentionDays: '31' }, /logRetentionDays must be one of CloudWatch's values 1, 3, 5, 7, 14, 30/],
  [{ removalPolicy: 'snapshot' }, /removalPolicy must be retain or destroy: "snapshot"/],
  [{ memorySize: '64' }, /memorySize must be a whole number of MB from 128 to 10240: 64/],
  [{ architecture: 'arm' }, /architecture must be arm64 or x86_64: "arm"/],
  [{ corsOrigins: 'https://shop.example/page' }, /corsOrigins: "https:\/\/shop.example\/page" is not \* or an origin/],
  [{ corsOrigins: '*,https://shop.example' }, /\* already allows every origin/],
  [{ alarmEmail: 'ops' }, /alarmEmail is not an email address: "ops"/],
  [{ alarmTopicArn: 'ops-topic' }, /alarmTopicArn is not an SNS topic ARN/],
  [{ alarmEmail: 'ops@shop.example', alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops' }, /alarmEmail or alarmTopicArn, not both/],
  [{ botCacheTtlMs: '-1' }, /context botCacheTtlMs must be a whole number/],
  [{ limits: 'RATE_MESSAGES_PER_MINUTE' }, /limits must be NAME=number pairs/],
  [{ limits: 'RATE_EVERYTHING=5' }, /unknown limit RATE_EVERYTHING; known: RATE_MESSAGES_PER_MINUTE/],
  [{ limits: 'MAX_UPLOAD_BYTES=0' }, /MAX_UPLOAD_BYTES must be from 1 to 5368709120 \(S3's 5 GB for one POST\): 0/],
  [{ limits: 'MAX_UPLOAD_BYTES=5368709121' }, /MAX_UPLOAD_BYTES must be from 1 to 5368709120/],
  [{ limits: 'MAX_OPEN_UPLOAD_BYTES=1000' }, /MAX_OPEN_UPLOAD_BYTES must be 0 \(off\) or at least MAX_UPLOAD_BYTES \(104857600\)/],
  [{ limits: 'MAX_UPLOAD_BYTES=1000,MAX_UPLOAD_BYTES_PER_DAY=999' }, /MAX_UPLOAD_BYTES_PER_DAY must be 0 \(off\) or at least MAX_UPLOAD_BYTES \(1000\)/],
])('%o is refused: %s', (context, message) => {
  expect(() => configsFromContext(context)).toThrow(message);
});
