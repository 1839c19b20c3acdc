// CDK assertions on the alarms: what each watches and its threshold, where they notify (none, our topic, a given one), and their count and cost in docs/deploy.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { loadShape } from '../support/cdk-template';
import { logicalIds, SHAPES, template as shape, type StackIds } from '../support/shapes';
import { ALL_FUNCTIONS, PUBLISHER, WEBHOOK_DISPATCHER } from '../../lib/consumers';
import { TASK_TIME_MARGIN_MS } from '../../lambdas/shared/config';
import { ofType, propsOf, resourcesOf, type AlarmProps, type FunctionProps, type Intrinsic, type MetricQuery, type Resources } from './cfn';

const ALL_DEFS = ALL_FUNCTIONS;

let template: Template;
let resources: Resources;
let ids: StackIds;
beforeAll(async () => {
  ({ template, ids } = await loadShape('Defaults'));
  resources = resourcesOf(template);
});

describe('alarms', () => {
  const alarmsOf = (t: Template) => ofType<AlarmProps>(t, 'AWS::CloudWatch::Alarm');
  /** A dimension's value as the template holds it: a Ref or Fn::GetAtt of a logical id. */
  const ref = (v: unknown) => v as Intrinsic;
  /** The metric queries that read a metric (not the math expression over them). */
  const stats = (a: AlarmProps): Required<MetricQuery>['MetricStat'][] => (a.Metrics ?? []).flatMap((m) => (m.MetricStat ? [m.MetricStat] : []));

  test('per function errors, throttles and duration near the timeout; stream iterator age and reported failures; HTTP API 5xx rate; WebSocket execution errors; DynamoDB throttles and system errors; dead-letter depth and the oldest webhook job; no topic by default', () => {
    const alarms = alarmsOf(template);
    const byMetric = (name: string) => alarms.filter(([, a]) => a.Properties.MetricName === name);
    const fnRefs = (xs: typeof alarms) => xs.map(([, a]) => ref(a.Properties.Dimensions[0].Value).Ref).sort();
    const allFns = ALL_DEFS.map((d) => ids.functions[d.id]).sort();
    expect(fnRefs(byMetric('Errors'))).toEqual(allFns);
    expect(fnRefs(byMetric('Throttles'))).toEqual(allFns);
    expect(fnRefs(byMetric('IteratorAge'))).toEqual([ids.functions.publisher, ids.functions.webhook_dispatcher].sort());
    for (const [, a] of byMetric('IteratorAge')) expect(a.Properties).toMatchObject({ Statistic: 'Maximum', Threshold: 60_000 });
    const dlqs = byMetric('ApproximateNumberOfMessagesVisible').map(([, a]) => ref(a.Properties.Dimensions[0].Value)['Fn::GetAtt']?.[0]).sort();
    const redoDlqs = Object.values(ids.redoQueues).map((q) => q.dlq);
    expect(dlqs).toEqual([ids.queues.webhooks_dlq, ids.queues.tasks_dlq, ids.webhookDispatcherDlq, ids.publisherDlq!, ids.uploadCompleterDlq, ...redoDlqs].sort());
    const rate = alarms.filter(([, a]) => a.Properties.Metrics?.some((m) => m.MetricStat?.Metric.Namespace === 'AWS/ApiGateway'));
    expect(rate).toHaveLength(1);
    expect(rate[0][1].Properties).toMatchObject({ Threshold: 5, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(stats(rate[0][1].Properties).map((m) => m.Metric.MetricName).sort()).toEqual(['5xx', 'Count']);
    // Duration near the timeout: 80 % of each function's own; the task worker's, 15 s before it (it works until
    // 30 s are left, so 80 % is a normal long task).
    const near = byMetric('Duration');
    expect(fnRefs(near)).toEqual(allFns);
    for (const def of ALL_DEFS) {
      const [, a] = near.find(([, x]) => ref(x.Properties.Dimensions[0].Value).Ref === ids.functions[def.id])!;
      const timeoutS = propsOf<FunctionProps>(resources, ids.functions[def.id]).Timeout;
      const threshold = def.id === 'task_worker' ? 1000 * timeoutS - TASK_TIME_MARGIN_MS / 2 : 800 * timeoutS;
      expect([def.id, a.Properties.Statistic, a.Properties.Threshold]).toEqual([def.id, 'Maximum', threshold]);
    }
    // The worker's margin, which both of its tasks keep.
    expect(TASK_TIME_MARGIN_MS).toBe(30_000);
    for (const file of ['erase.ts', 'retention-task.ts']) expect(readFileSync(join(__dirname, '../../lambdas/flows', file), 'utf8')).toContain('timeLeft() > TASK_TIME_MARGIN_MS');
    // Partial-batch failures: a metric filter on each stream consumer's log group counts the line its handler
    // writes on each reported failure (the line is in the handler's source, so a reworded one fails here).
    for (const def of [PUBLISHER, WEBHOOK_DISPATCHER]) {
      expect(readFileSync(join(__dirname, '../..', def.entry), 'utf8')).toContain(`'${def.failureLog}'`);
      template.hasResourceProperties('AWS::Logs::MetricFilter', {
        LogGroupName: { Ref: ids.logGroups[def.id] },
        FilterPattern: `{ $.message = "${def.failureLog}" }`,
        MetricTransformations: [Match.objectLike({ MetricNamespace: 'ChatBot/dev', MetricValue: '1', DefaultValue: Match.absent() })],
      });
      const [, a] = byMetric(`${def.id === 'publisher' ? 'Publisher' : 'WebhookDispatcher'}BatchItemFailures`)[0];
      expect(a.Properties).toMatchObject({ Namespace: 'ChatBot/dev', Statistic: 'Sum', Threshold: 1 });
    }
    // The oldest webhook job, past the longest retry delay (15 min) twice over.
    const [, oldest] = byMetric('ApproximateAgeOfOldestMessage')[0];
    expect(oldest.Properties).toMatchObject({ Statistic: 'Maximum', Threshold: 1800, Dimensions: [{ Value: { 'Fn::GetAtt': [ids.queues.webhooks, 'QueueName'] } }] });
    // WebSocket API: integrations API Gateway failed to run.
    const [, ws] = byMetric('ExecutionError')[0];
    expect(ws.Properties).toMatchObject({ Namespace: 'AWS/ApiGateway', Statistic: 'Sum', Threshold: 1 });
    expect(ws.Properties.Dimensions).toEqual([
      { Name: 'ApiId', Value: { Ref: ids.wsApi! } },
      { Name: 'Stage', Value: 'live' },
    ]);
    // DynamoDB: throttled requests and system errors, summed over every operation the functions make.
    const math = alarms.filter(([, a]) => a.Properties.Metrics);
    const tableAlarm = (name: string) =>
      math.filter(([, a]) => stats(a.Properties).some((m) => m.Metric.MetricName === name && m.Metric.Namespace === 'AWS/DynamoDB'));
    for (const name of ['ThrottledRequests', 'SystemErrors']) {
      const [[, a], ...more] = tableAlarm(name);
      expect(more).toEqual([]);
      const ops = stats(a.Properties).map((m) => m.Metric.Dimensions.find((d) => d.Name === 'Operation')!.Value);
      expect([name, ops.sort()]).toEqual([name, ['BatchGetItem', 'BatchWriteItem', 'DeleteItem', 'GetItem', 'PutItem', 'Query', 'TransactWriteItems', 'UpdateItem']]);
      expect(a.Properties.Threshold).toBe(1);
    }
    expect(alarms).toHaveLength(3 * ALL_DEFS.length + 2 * 2 + 1 + 7 + 1 + 1 + 2);
    for (const [, a] of alarms) {
      expect(a.Properties.TreatMissingData).toBe('notBreaching');
      expect(a.Properties.AlarmActions).toBeUndefined();
    }
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  test('alarmEmail: a topic of our own (SSL only) with the address subscribed, on alarm and on recovery', async () => {
    expect(SHAPES.AlarmEmailEveryOption.alarmEmail).toBe('ops@shop.example');
    const t = Template.fromJSON(await shape('AlarmEmailEveryOption'));
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@shop.example' });
    t.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const topic = { Ref: (await logicalIds('AlarmEmailEveryOption')).alarmTopic! };
    for (const [, a] of alarmsOf(t)) expect(a.Properties).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
  });

  test('alarmTopicArn: an existing topic; realtime off: no WebSocket alarms, the publisher (counting only) watched as with realtime', async () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:ops';
    expect(SHAPES.AlarmTopicRealtimeOff).toMatchObject({ alarmTopicArn: arn, realtime: false });
    const t = Template.fromJSON(await shape('AlarmTopicRealtimeOff'));
    t.resourceCountIs('AWS::SNS::Topic', 0);
    const alarms = alarmsOf(t);
    for (const [, a] of alarms) expect(a.Properties.AlarmActions).toEqual([arn]);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'IteratorAge')).toHaveLength(2);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible')).toHaveLength(7);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'ExecutionError')).toHaveLength(0);
    expect(alarms.filter(([, a]) => a.Properties.MetricName === 'PublisherBatchItemFailures')).toHaveLength(1);
  });

  test('docs/cost.md states the alarm count and their monthly cost (CloudWatch bills each metric an alarm reads)', async () => {
    const readme = readFileSync(join(__dirname, '../../docs/cost.md'), 'utf8');
    const count = (t: Template) => {
      const alarms = alarmsOf(t);
      const metrics = alarms.reduce((n, [, a]) => n + (a.Properties.Metrics ? stats(a.Properties).length : 1), 0);
      return { alarms: alarms.length, metrics, dollars: (metrics * 0.1).toFixed(2) };
    };
    const on = count(template);
    const off = count(Template.fromJSON(await shape('RealtimeOff')));
    const stated = /\*\*At rest\*\*[^]*?the (\d+) alarms \((\d+) alarm metrics, \$(\d+\.\d\d)\)[^]*?realtime off: (\d+) alarms, (\d+) alarm metrics, \$(\d+\.\d\d)/.exec(readme);
    expect(stated && stated.slice(1).map(String)).toEqual([on.alarms, on.metrics, on.dollars, off.alarms, off.metrics, off.dollars].map(String));
  });
});
