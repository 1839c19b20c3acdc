// CDK assertions on least privilege: each function's role gets exactly what its definition lists, on exactly its resources, X-Ray on or off.
import { logicalIds, SHAPES, template, type StackIds } from '../support/shapes';
import { type FunctionDef } from '../../lib/routes';
import { ALL_FUNCTIONS, PUBLISHER, TASK_WORKER, UPLOAD_COMPLETER, WEBHOOK_DELIVERER } from '../../lib/consumers';
import { propsOf, valuesOfType, type CfnValue, type FunctionProps, type PolicyProps, type Resources, type Statement } from './cfn';

const ALL_DEFS = ALL_FUNCTIONS;

const LOG_ACTIONS = ['logs:CreateLogStream', 'logs:PutLogEvents'];
const SECRET_ACTIONS = ['secretsmanager:GetSecretValue'];
const SEND_ACTIONS = ['sqs:SendMessage'];
/** What CDK grants a stream consumer's on-failure destination (Lambda itself sends the failed records there). */
const DESTINATION_ACTIONS = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
/** What an event source mapping itself needs, granted to the function's role by CDK. */
const STREAM_READ_ACTIONS = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
const SQS_CONSUMER_ACTIONS = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];
const XRAY_ACTIONS = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

/** A CloudFormation value as a readable string: <Table.Arn>/index/gsi2, <AWS::Region>, *. */
const flat = (v: CfnValue): string =>
  typeof v === 'string'
    ? v
    : v['Fn::GetAtt']
      ? `<${v['Fn::GetAtt'].join('.')}>`
      : v.Ref !== undefined
        ? `<${v.Ref}>`
        : v['Fn::Join']
          ? v['Fn::Join'][1].map(flat).join(v['Fn::Join'][0])
          : JSON.stringify(v);
const pairs = (actions: string[], ...on: string[]) => actions.flatMap((a) => on.map((r) => `${a} on ${r}`));
const sortedSet = (xs: string[]) => [...new Set(xs)].sort();

/** One synthesized shape: its resources and its constructs' logical IDs. */
interface Shape {
  res: Resources;
  ids: StackIds;
}
const load = async (name: keyof typeof SHAPES): Promise<Shape> => ({ res: (await template(name)).Resources, ids: await logicalIds(name) });

/** Every "action on resource" a function's role is granted, across its policies (all Allow). */
function grantsOf({ res, ids }: Shape, fnId: string): string[] {
  const roleId = propsOf<FunctionProps>(res, ids.functions[fnId]).Role['Fn::GetAtt']![0];
  expect(propsOf<{ ManagedPolicyArns?: string[] }>(res, roleId).ManagedPolicyArns).toBeUndefined(); // no AWS managed policy (e.g. AWSLambdaBasicExecutionRole)
  const statements = valuesOfType<PolicyProps>(res, 'AWS::IAM::Policy')
    .filter((r) => r.Properties.Roles.some((x) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
  // The two conditions: listing the bucket only under bots/ (an erasure lists one user's files), and a reader's
  // UpdateItem only on rate counters.
  const listUnderBots = (st: Statement) => st.Action === 's3:ListBucket' && JSON.stringify(st.Condition) === JSON.stringify({ StringLike: { 's3:prefix': ['bots/*'] } });
  const rateOnly = (st: Statement) => st.Action === 'dynamodb:UpdateItem' && JSON.stringify(st.Condition) === JSON.stringify({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RATE#*'] } });
  expect(statements.every((st) => st.Effect === 'Allow' && (!st.Condition || listUnderBots(st) || rateOnly(st)))).toBe(true);
  const when = (st: Statement) => (!st.Condition ? '' : listUnderBots(st) ? ' if s3:prefix bots/*' : ' if dynamodb:LeadingKeys RATE#*');
  return sortedSet(statements.flatMap((st) => [st.Action].flat().flatMap((a) => [st.Resource].flat().map((r) => `${a} on ${flat(r)}${when(st)}`))));
}

/** What a definition says its function may do, on exactly which resources. */
function expectedGrants({ res, ids }: Shape, def: FunctionDef, tracing: boolean): string[] {
  const table = `<${ids.table}.Arn>`;
  const secret = `<${Object.keys(res).find((k) => res[k].Type === 'AWS::SecretsManager::Secret')}>`;
  const streamDlq = def === PUBLISHER ? ids.publisherDlq! : ids.webhookDispatcherDlq;
  return sortedSet([
    ...pairs(LOG_ACTIONS, `<${ids.logGroups[def.id]}.Arn>`), // its own log group only
    ...pairs(def.dynamodb.map((a) => `dynamodb:${a}`), table, ...(def.index ? [`${table}/index/gsi1`, `${table}/index/gsi2`] : [])),
    ...(def.rateCounters ? [`dynamodb:UpdateItem on ${table} if dynamodb:LeadingKeys RATE#*`] : []),
    ...pairs((def.s3 ?? []).filter((a) => a !== 's3:ListBucket'), `<${ids.bucket}.Arn>/bots/*`),
    ...(def.s3?.includes('s3:ListBucket') ? [`s3:ListBucket on <${ids.bucket}.Arn> if s3:prefix bots/*`] : []),
    ...(def.jwt ? pairs(SECRET_ACTIONS, secret) : []),
    // Publishing posts to sockets; closing them (an erasure) posts a Disconnect push, then deletes them.
    ...(def.manageConnections || def.closeConnections
      ? pairs(
          ['execute-api:ManageConnections'],
          ...['POST', ...(def.closeConnections ? ['DELETE'] : [])].map((m) => `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${ids.wsApi!}>/live/${m}/@connections/*`),
        )
      : []),
    ...(def.queues ?? []).flatMap((q) => pairs(SEND_ACTIONS, `<${ids.queues[q]}.Arn>`)),
    // Event source mappings read the stream (ListStreams cannot be scoped) and send failures to the DLQ...
    ...('filters' in def
      ? [...pairs(STREAM_READ_ACTIONS, `<${ids.table}.StreamArn>`), 'dynamodb:ListStreams on *', ...pairs(DESTINATION_ACTIONS, `<${streamDlq}.Arn>`)]
      : []),
    // S3 invokes the upload completer asynchronously; Lambda sends what failed every retry to its queue.
    ...(def === UPLOAD_COMPLETER ? pairs(DESTINATION_ACTIONS, `<${ids.uploadCompleterDlq}.Arn>`) : []),
    // ...or consume the queue, with the function's role.
    ...(def === WEBHOOK_DELIVERER ? pairs(SQS_CONSUMER_ACTIONS, `<${ids.queues.webhooks}.Arn>`, `<${ids.queues.webhooks_slow}.Arn>`) : []),
    ...(def === TASK_WORKER ? pairs(SQS_CONSUMER_ACTIONS, `<${ids.queues.tasks}.Arn>`) : []),
    // A stream consumer sends what it sets aside to its redo queue, and consumes it.
    ...('filters' in def ? pairs([...SEND_ACTIONS, ...SQS_CONSUMER_ACTIONS], `<${ids.redoQueues[def.id as 'publisher'].queue}.Arn>`) : []),
    ...(tracing ? pairs(XRAY_ACTIONS, '*') : []), // X-Ray has no resource-level permissions
  ]);
}

describe('least privilege', () => {
  test('each function gets exactly the actions its definition lists, on exactly its resources', async () => {
    const shape = await load('Defaults');
    for (const def of ALL_DEFS) {
      expect({ fn: def.id, grants: grantsOf(shape, def.id) }).toEqual({ fn: def.id, grants: expectedGrants(shape, def, false) });
    }
    // Only the publisher and what erases a user reach sockets; list_chats writes nothing but its rate counter.
    for (const def of ALL_DEFS.filter((d) => d !== PUBLISHER && !d.closeConnections)) {
      expect(grantsOf(shape, def.id).join('\n')).not.toContain('execute-api:');
    }
    const writes = grantsOf(shape, 'list_chats').filter((g) => /^(dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)|s3:PutObject) /.test(g));
    expect(writes).toEqual([`dynamodb:UpdateItem on <${shape.ids.table}.Arn> if dynamodb:LeadingKeys RATE#*`]);
    for (const def of ALL_DEFS) expect(propsOf<FunctionProps>(shape.res, shape.ids.functions[def.id]).TracingConfig).toBeUndefined();
  });

  test('X-Ray on: every function traces, and gains only xray:Put* (on *, X-Ray has no resources)', async () => {
    // The shape with every option on (test/support/shapes.ts) traces; its other options grant nothing more.
    expect(SHAPES.AlarmEmailEveryOption.tracing).toBe(true);
    const traced = await load('AlarmEmailEveryOption');
    for (const def of ALL_DEFS) {
      const fn = propsOf<FunctionProps>(traced.res, traced.ids.functions[def.id]);
      expect({ fn: def.id, tracing: fn.TracingConfig }).toEqual({ fn: def.id, tracing: { Mode: 'Active' } });
      expect({ fn: def.id, grants: grantsOf(traced, def.id) }).toEqual({
        fn: def.id,
        grants: expectedGrants(traced, def, true),
      });
    }
  });
});

test("CDK's bucket-deployment handler (deploys only): reads CDK's asset bucket, writes the web bucket, invalidates; nothing of the data", async () => {
  const { res, ids } = await load('Defaults');
  const [handlerId] = Object.keys(res).filter((k) => res[k].Type === 'AWS::Lambda::Function' && k.startsWith('CustomCDKBucketDeployment'));
  const roleId = propsOf<FunctionProps>(res, handlerId).Role['Fn::GetAtt']![0];
  const statements = valuesOfType<PolicyProps>(res, 'AWS::IAM::Policy')
    .filter((r) => r.Properties.Roles.some((x) => x.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
  const grants = statements.map((st) => `${[st.Action].flat().join(',')} on ${[st.Resource].flat().map(flat).join(', ')}`);
  const assets = 'arn:<AWS::Partition>:s3:::{"Fn::Sub":"cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}"}';
  const web = `<${ids.web!.bucket}.Arn>`;
  // CDK's grants as it makes them (lib/stack-web.ts acknowledges their wildcards), on its asset bucket and ours only.
  expect(grants).toEqual([
    `s3:GetObject*,s3:GetBucket*,s3:List* on ${assets}, ${assets}/*`,
    `s3:GetObject*,s3:GetBucket*,s3:List*,s3:DeleteObject*,s3:PutObject,s3:PutObjectLegalHold,s3:PutObjectRetention,s3:PutObjectTagging,s3:PutObjectVersionTagging,s3:Abort* on ${web}, ${web}/*`,
    'cloudfront:GetInvalidation,cloudfront:CreateInvalidation on *',
  ]);
  expect(grants.join('\n')).not.toMatch(new RegExp([ids.table, ids.bucket, ids.jwtSecret, 'dynamodb:', 'secretsmanager:'].join('|')));
});
