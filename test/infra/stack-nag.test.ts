// cdk-nag AwsSolutions on three shapes (no finding left, each acknowledgement real), and two stages side by side with cdk-nag on and no fixed names.
import { readFileSync } from 'node:fs';
import { nagReport, SHAPES, stagedSynth, templateFiles } from '../support/shapes';
import type { Resources } from './cfn';

describe('cdk-nag AwsSolutions', () => {
  // Label → the shape checked (test/support/shapes.ts) and the props it must have; the report is the run's synth's.
  const configs: Record<string, [keyof typeof SHAPES, object]> = {
    defaults: ['Defaults', {}],
    'every option on': ['AlarmEmailEveryOption', { tracing: true, removalPolicy: 'destroy', alarmEmail: 'ops@shop.example', wsAccessLogs: true, architecture: 'x86_64' }],
    'realtime off, an existing topic, a known region': [
      'AlarmTopicRealtimeOff',
      { realtime: false, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', env: { region: 'eu-west-1' } },
    ],
  };

  test.each(Object.entries(configs))('%s: no finding (error or warning) left unacknowledged, no CDK warning either', async (_name, [shape, props]) => {
    expect(SHAPES[shape]).toEqual(props);
    const report = await nagReport(shape);
    expect(report.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.paths.join(', ')}`)).toEqual([]);
    expect(report.annotations).toEqual([]);
  });

  test.each(Object.entries(configs))('%s: every acknowledgement has a one-line reason and silences a real finding', async (_name, [shape]) => {
    // The synth recorded each acknowledgement as made, and what the checks find with acknowledgements ignored.
    const { acks, findings: violations } = await nagReport(shape);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.reason).toMatch(/^[^\n]{20,200}$/);
      const hidden = violations.find((v) => v.ruleName === ack.id && v.paths.some((p) => p.startsWith(`${ack.path}/`)));
      expect({ ...ack, hides: hidden ? 'a finding' : 'nothing' }).toEqual({ ...ack, hides: 'a finding' });
    }
  });
});

test('two stages synthesize side by side in one app (context stage=staging,prod), cdk-nag on, no fixed names', async () => {
  // The run's synth makes them from STAGE_CONTEXT with the AwsSolutions plugin, as bin/app.ts: a finding stops it.
  const { templates, nag } = await stagedSynth();
  expect(templates.sort()).toEqual(['ChatBot-prod.template.json', 'ChatBot-staging.template.json']);
  expect(nag).toEqual({ templates: ['ChatBot-prod.template.json', 'ChatBot-staging.template.json'], violations: [] });
  // Physical names are generated per stack (stack name + logical id): no resource may pin one.
  // (An HTTP API's Name and an inline policy's PolicyName are labels inside their API or role, not global.)
  const NAME_PROPS = ['TableName', 'BucketName', 'FunctionName', 'QueueName', 'TopicName', 'LogGroupName', 'AlarmName', 'RoleName', 'SecretName', 'Name'];
  const files = await templateFiles();
  for (const file of templates) {
    const res = (JSON.parse(readFileSync(files[file.replace(/\.template\.json$/, '')], 'utf8')) as { Resources: Resources }).Resources;
    const pinned = Object.entries(res).flatMap(([id, r]) =>
      NAME_PROPS.filter((p) => typeof r.Properties?.[p] === 'string' && r.Type !== 'AWS::ApiGatewayV2::Api').map((p) => `${id}.${p}`),
    );
    expect({ file, pinned }).toEqual({ file, pinned: [] });
  }
});
