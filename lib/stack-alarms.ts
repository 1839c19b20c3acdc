// Alarms on what should never happen quietly, sent to the configured SNS topic (if any).
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { PUBLISHER, TASK_WORKER, WEBHOOK_DISPATCHER } from './consumers';
import { pascal } from './stack-functions';
import { TASK_TIME_MARGIN_MS } from '../lambdas/shared/config';
import type { StackParts } from './stack-parts';

/** Alarms on what should never happen quietly, sent to the configured SNS topic (if any). */
export function addAlarms(stack: StackParts): sns.ITopic | undefined {
  const { config } = stack;
  let topic: sns.ITopic | undefined;
  if (config.alarmTopicArn) topic = sns.Topic.fromTopicArn(stack, 'AlarmTopic', config.alarmTopicArn);
  if (config.alarmEmail) {
    const own = new sns.Topic(stack, 'AlarmTopic', { displayName: `Chat bot ${config.stage} alarms`, enforceSSL: true });
    own.addSubscription(new EmailSubscription(config.alarmEmail));
    topic = own;
  }
  const period = Duration.minutes(5);
  const alarm = (id: string, metric: cloudwatch.IMetric, threshold: number, description: string) => {
    const a = new cloudwatch.Alarm(stack, id, {
      metric,
      threshold,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${config.stage}: ${description}`,
    });
    if (topic) {
      a.addAlarmAction(new SnsAction(topic));
      a.addOkAction(new SnsAction(topic));
    }
    stack.alarms.push(a);
  };

  for (const [id, fn] of Object.entries(stack.functions)) {
    // Handled failures are replies (4xx, 5xx); a Lambda error is a crash or a timeout: each one is a bug.
    alarm(`${pascal(id)}Errors`, fn.metricErrors({ period, statistic: 'Sum' }), 1, `${id} crashed or timed out`);
    alarm(`${pascal(id)}Throttles`, fn.metricThrottles({ period, statistic: 'Sum' }), 1, `${id} was throttled (account concurrency)`);
    // One step from a timeout (which fails the request, or replays a consumer's whole batch). The task worker
    // works on purpose until TASK_TIME_MARGIN_MS is left: near the timeout, for it, is a step that ran on past
    // that point by half the margin.
    const timeoutMs = fn.timeout!.toMilliseconds();
    const nearMs = id === TASK_WORKER.id ? timeoutMs - TASK_TIME_MARGIN_MS / 2 : 0.8 * timeoutMs;
    alarm(`${pascal(id)}NearTimeout`, fn.metricDuration({ period, statistic: 'Maximum' }), nearMs, `${id} ran ${nearMs / 1000} s or more of its ${timeoutMs / 1000} s timeout`);
  }
  const streamConsumers = [WEBHOOK_DISPATCHER, PUBLISHER];
  for (const def of streamConsumers) {
    const fn = stack.functions[def.id];
    const age = fn.metric('IteratorAge', { period, statistic: 'Maximum' });
    alarm(`${pascal(def.id)}IteratorAge`, age, 60_000, `${def.id} is a minute or more behind the table stream`);
    // Records reported back as failed are retried (and the batch's later records with them) before any
    // reaches the dead-letter queue; Lambda counts such a batch as a success, so its log line is counted.
    // No default value: nothing is published (or billed) while nothing fails.
    const filter = fn.logGroup.addMetricFilter(`${pascal(def.id)}FailureLines`, {
      filterPattern: logs.FilterPattern.stringValue('$.message', '=', def.failureLog),
      metricNamespace: `ChatBot/${config.stage}`,
      metricName: `${pascal(def.id)}BatchItemFailures`,
      metricValue: '1',
    });
    alarm(`${pascal(def.id)}BatchItemFailures`, filter.metric({ period, statistic: 'Sum' }), 1, `${def.id} reported stream records as failed (retried)`);
  }
  // The oldest webhook job: retries wait up to 15 min (WEBHOOK_RETRY_DELAYS), so 30 min means the
  // deliverer is not keeping up or not running. Not the slow lane's: there a backlog of bots whose servers hang
  // is what the lane is for, and it delays no one else (a deliverer not running shows on this queue too).
  const oldest = stack.queues.webhooks.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' });
  alarm('WebhookQueueOldestJob', oldest, 1800, 'a webhook job has waited 30 minutes or more');
  if (stack.wsApi && stack.wsStage) {
    // API Gateway could not run the integration (a Lambda that failed to run, a permission, a timeout);
    // IntegrationError would also count $connect's 401s to bad tokens, which are answers.
    const wsErrors = new cloudwatch.Metric({
      namespace: 'AWS/ApiGateway',
      metricName: 'ExecutionError',
      dimensionsMap: { ApiId: stack.wsApi.apiId, Stage: stack.wsStage.stageName },
      period,
      statistic: 'Sum',
    });
    alarm('RealtimeApiExecutionErrors', wsErrors, 1, 'the WebSocket API failed to run an integration');
  }
  // Every table operation the functions make (transactions carry the condition checks).
  const operations = [
    dynamodb.Operation.GET_ITEM,
    dynamodb.Operation.BATCH_GET_ITEM,
    dynamodb.Operation.QUERY,
    dynamodb.Operation.PUT_ITEM,
    dynamodb.Operation.UPDATE_ITEM,
    dynamodb.Operation.DELETE_ITEM,
    dynamodb.Operation.BATCH_WRITE_ITEM,
    dynamodb.Operation.TRANSACT_WRITE_ITEMS,
  ];
  alarm('TableThrottledRequests', stack.table.metricThrottledRequestsForOperations({ operations, period }), 1, 'DynamoDB throttled requests (retried, then 503)');
  alarm('TableSystemErrors', stack.table.metricSystemErrorsForOperations({ operations, period }), 1, 'DynamoDB answered requests with a 500');
  const rate = new cloudwatch.MathExpression({
    // Below 20 requests in 5 minutes a rate says little: one failed request would be 5 %.
    expression: 'IF(requests >= 20, 100 * errors / requests, 0)',
    usingMetrics: {
      errors: stack.api.metricServerError({ period, statistic: 'Sum' }),
      requests: stack.api.metricCount({ period, statistic: 'Sum' }),
    },
    period,
    label: 'HTTP API 5xx %',
  });
  alarm('ClientApi5xxRate', rate, 5, '5 % or more of HTTP API requests answered 5xx');
  const dlqs = {
    WebhookDlq: stack.queues.webhooks_dlq,
    TaskDlq: stack.queues.tasks_dlq,
    WebhookDispatcherDlq: stack.webhookDispatcherDlq,
    PublisherDlq: stack.publisherDlq,
    UploadCompleterDlq: stack.uploadCompleterDlq,
    // Stream records set aside that failed every redo (docs/deploy.md "Dead letters").
    PublisherRedoDlq: stack.redoDlqs.publisher,
    WebhookDispatcherRedoDlq: stack.redoDlqs.webhook_dispatcher,
  };
  for (const [id, queue] of Object.entries(dlqs)) {
    if (!queue) continue;
    const depth = queue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' });
    alarm(`${id}Depth`, depth, 1, `${id} holds messages that failed every retry`);
  }
  return topic;
}
