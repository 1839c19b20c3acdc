// The stack as synthesized (no bundling), and what it describes made in moto: the table, the files bucket,
// the queues, the JWT secret; each function's environment and role policy with the template's references
// resolved to what was made.
import { CreateTableCommand, DynamoDBClient, PutItemCommand, UpdateTimeToLiveCommand, type CreateTableCommandInput, type StreamViewType, type TimeToLiveSpecification } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { template } from '../support/shapes';
import { type FunctionDef, type QueueName } from '../../lib/routes';
import { ALL_FUNCTIONS } from '../../lib/consumers';
import { keys, LAYOUT_VERSION } from '../../lambdas/entities/keys';
import { DEFAULT_CHAT_LIST_SHARDS } from '../../lambdas/shared/config';

export const REGION = 'us-east-1';
export const ACCOUNT = '123456789012';
export const ALL_DEFS: FunctionDef[] = ALL_FUNCTIONS;
/** The logical id prefix of each queue routes.ts names. */
const QUEUE_IDS: Record<QueueName, string> = { webhooks: 'WebhookQueue', webhooks_slow: 'WebhookSlowQueue', webhooks_dlq: 'WebhookDlq', tasks: 'TaskQueue', tasks_dlq: 'TaskDlq' };
const pascal = (id: string) => id.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase());

/** A policy statement with its references resolved to what moto made. */
export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: string | string[];
  Condition?: Record<string, unknown>;
}
/** A resource of the template, with the properties this file reads (by type; the rest stay open). */
interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}
export interface StackTemplate {
  Resources: Record<string, Resource>;
}
interface FunctionProps {
  Role: { 'Fn::GetAtt': [string, string] };
  Environment?: { Variables: Record<string, unknown> };
}
interface PolicyProps {
  Roles: { Ref?: string }[];
  /** As synthesized: its values are still intrinsics until resolved. */
  PolicyDocument: { Statement: unknown[] };
}
/** The table's properties as CreateTable and UpdateTimeToLive take them. */
type TableProps = Pick<CreateTableCommandInput, 'AttributeDefinitions' | 'KeySchema' | 'BillingMode' | 'GlobalSecondaryIndexes'> & {
  StreamSpecification?: { StreamViewType: StreamViewType };
  TimeToLiveSpecification?: TimeToLiveSpecification;
};

/** The default stack, from the test run's one synth (test/support/shapes.ts). */
export const synthTemplate = (): Promise<StackTemplate> => template('Defaults');

/** What a Ref or Fn::GetAtt of a logical id stands for in moto. */
export type Refs = Record<string, { ref: string; attrs: Record<string, string> }>;

export function resolve(value: unknown, refs: Refs): unknown {
  if (Array.isArray(value)) return value.map((v) => resolve(v, refs));
  if (value === null || typeof value !== 'object') return value;
  if ('Ref' in value) {
    const pseudo: Record<string, string> = { 'AWS::Partition': 'aws', 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT, 'AWS::URLSuffix': 'amazonaws.com' };
    const id = value.Ref as string;
    const out = pseudo[id] ?? refs[id]?.ref;
    if (out === undefined) throw new Error(`unresolved Ref ${id}`);
    return out;
  }
  if ('Fn::GetAtt' in value) {
    const [id, attr] = value['Fn::GetAtt'] as [string, string];
    const out = refs[id]?.attrs[attr];
    if (out === undefined) throw new Error(`unresolved Fn::GetAtt ${id}.${attr}`);
    return out;
  }
  if ('Fn::Join' in value) {
    const [sep, parts] = value['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => resolve(p, refs)).join(sep);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, refs)]));
}

export interface MotoFunction {
  def: FunctionDef;
  /** The template's environment, resolved. */
  env: Record<string, string>;
  /** The role's policy statements as synthesized, resolved. */
  statements: Statement[];
}

export interface MotoStack {
  template: StackTemplate;
  refs: Refs;
  tableName: string;
  streamArn: string;
  bucket: string;
  queueUrls: Record<string, string>;
  secretArn: string;
  functions: Record<string, MotoFunction>;
}

/** A new stage's table once its data move ran (a few seconds after the first deploy; flows/migrate.ts) has this marker: at the current layout. */
export const layoutMarker = () => ({ ...keys.layout(), entity: 'layout', version: LAYOUT_VERSION, chat_list_shards: DEFAULT_CHAT_LIST_SHARDS });

/** The resources of one type, with their ids; `P` names the properties read of them. */
const of = <P = Record<string, unknown>>(resources: StackTemplate['Resources'], type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type) as [string, { Type: string; Properties: P }][];

/** Makes in moto (still open, no auth) every resource the functions reach, named after their logical ids. */
export async function createStack(endpoint: string, template: StackTemplate, secret: string): Promise<MotoStack> {
  const opts = { endpoint, region: REGION, credentials: { accessKeyId: 'setup', secretAccessKey: 'setup' } };
  const R = template.Resources;
  const refs: Refs = {};

  const [[tableId, table]] = of<TableProps>(R, 'AWS::DynamoDB::Table');
  const ddb = new DynamoDBClient(opts);
  const p = table.Properties;
  const input: CreateTableCommandInput = {
    TableName: tableId,
    AttributeDefinitions: p.AttributeDefinitions,
    KeySchema: p.KeySchema,
    BillingMode: p.BillingMode,
    GlobalSecondaryIndexes: p.GlobalSecondaryIndexes,
    StreamSpecification: p.StreamSpecification && { StreamEnabled: true, StreamViewType: p.StreamSpecification.StreamViewType },
  };
  const created = await ddb.send(new CreateTableCommand(input));
  if (p.TimeToLiveSpecification) {
    await ddb.send(new UpdateTimeToLiveCommand({ TableName: tableId, TimeToLiveSpecification: p.TimeToLiveSpecification }));
  }
  const marker = layoutMarker();
  await ddb.send(new PutItemCommand({ TableName: tableId, Item: Object.fromEntries(Object.entries(marker).map(([k, v]) => [k, typeof v === 'number' ? { N: String(v) } : { S: v }])) }));
  ddb.destroy();
  const tableArn = created.TableDescription!.TableArn!;
  const streamArn = created.TableDescription!.LatestStreamArn!;
  refs[tableId] = { ref: tableId, attrs: { Arn: tableArn, StreamArn: streamArn } };

  const s3 = new S3Client({ ...opts, forcePathStyle: true });
  for (const [id] of of(R, 'AWS::S3::Bucket')) {
    const name = id.toLowerCase();
    await s3.send(new CreateBucketCommand({ Bucket: name }));
    refs[id] = { ref: name, attrs: { Arn: `arn:aws:s3:::${name}` } };
  }
  s3.destroy();

  const sqs = new SQSClient(opts);
  const queues = of<{ VisibilityTimeout?: number; MessageRetentionPeriod?: number; RedrivePolicy?: unknown; FifoQueue?: boolean }>(R, 'AWS::SQS::Queue').sort(([, a]) => (a.Properties.RedrivePolicy ? 1 : -1)); // dead-letter queues first
  for (const [id, q] of queues) {
    const attrs: Record<string, string> = {};
    if (q.Properties.VisibilityTimeout) attrs.VisibilityTimeout = String(q.Properties.VisibilityTimeout);
    if (q.Properties.MessageRetentionPeriod) attrs.MessageRetentionPeriod = String(q.Properties.MessageRetentionPeriod);
    if (q.Properties.RedrivePolicy) attrs.RedrivePolicy = JSON.stringify(resolve(q.Properties.RedrivePolicy, refs));
    // A FIFO queue (the stream consumers' redo queues and theirs) is named so, as CloudFormation names it.
    if (q.Properties.FifoQueue) attrs.FifoQueue = 'true';
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: q.Properties.FifoQueue ? `${id}.fifo` : id, Attributes: attrs }));
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
    refs[id] = { ref: QueueUrl!, attrs: { Arn: Attributes!.QueueArn!, QueueName: id } };
  }
  sqs.destroy();

  const sm = new SecretsManagerClient(opts);
  const [[secretId]] = of(R, 'AWS::SecretsManager::Secret');
  const { ARN } = await sm.send(new CreateSecretCommand({ Name: secretId, SecretString: secret }));
  sm.destroy();
  refs[secretId] = { ref: ARN!, attrs: {} };

  // Not made in moto, only named: the WebSocket API (its @connections is moto's), log groups, roles.
  for (const [id] of of(R, 'AWS::ApiGatewayV2::Api')) refs[id] = { ref: 'motoapi', attrs: { ApiEndpoint: 'wss://motoapi.execute-api.us-east-1.amazonaws.com' } };
  for (const [id] of of(R, 'AWS::Logs::LogGroup')) refs[id] = { ref: id, attrs: { Arn: `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${id}:*` } };
  for (const [id] of of(R, 'AWS::IAM::Role')) refs[id] = { ref: id, attrs: { Arn: `arn:aws:iam::${ACCOUNT}:role/${id}` } };

  const functions: Record<string, MotoFunction> = {};
  for (const def of ALL_DEFS) {
    const prefix = `${pascal(def.id)}Fn`;
    const found = of<FunctionProps>(R, 'AWS::Lambda::Function').filter(([id]) => id.startsWith(prefix) && /^[0-9A-F]{8}$/.test(id.slice(prefix.length)));
    if (found.length !== 1) throw new Error(`${def.id}: ${found.length} functions named ${prefix}*`);
    const fn = found[0][1].Properties;
    const role = fn.Role['Fn::GetAtt'][0];
    const statements = of<PolicyProps>(R, 'AWS::IAM::Policy')
      .filter(([, pol]) => pol.Properties.Roles.some((r) => r.Ref === role))
      .flatMap(([, pol]) => resolve(pol.Properties.PolicyDocument.Statement, refs) as Statement[]);
    functions[def.id] = { def, env: resolve(fn.Environment?.Variables ?? {}, refs) as Record<string, string>, statements };
  }
  const queueUrls = Object.fromEntries(queues.map(([id]) => [id, refs[id].ref]));
  return { template, refs, tableName: tableId, streamArn, bucket: refs[of(R, 'AWS::S3::Bucket').find(([id]) => id.startsWith('Files'))![0]].ref, queueUrls, secretArn: ARN!, functions };
}

const list = (x: unknown): unknown[] => (Array.isArray(x) ? (x as unknown[]) : [x]);

/**
 * The policy moto is given for a role's statements, minus `without` (an action removed from every
 * statement). Translated only where moto's model differs from AWS's, one for one:
 * - DynamoDB and Secrets Manager: moto checks the action against resource `*` only, so their resources are
 *   widened to `*` (S3 and SQS keep theirs: moto matches those).
 * - moto authorizes TransactWriteItems as an action of its own: it is added wherever an item action is
 *   granted, and the recorder checks each item's action as AWS does.
 * - SendMessageBatch is authorized by sqs:SendMessage on AWS; moto names it sqs:SendMessageBatch.
 * - @connections: AWS's action is execute-api:ManageConnections; moto names it after the operation
 *   (execute-api:PostToConnection, execute-api:DeleteConnection), on resource `*`.
 */
export function motoPolicy(statements: Statement[], without?: string): { document: { Version: string; Statement: Statement[] }; allowed: Set<string> } {
  const allowed = new Set<string>();
  // `action@Name`: the action removed only from statements on a resource named Name… (one queue's grant).
  const [action, resource] = (without ?? '').split('@');
  const out = statements
    .map((s) => {
      const scoped = !resource || list(s.Resource).some((r) => String(r).includes(`:${resource}`));
      const actions = [s.Action].flat().filter((a) => !(a === action && scoped));
      const extra: string[] = [];
      if (actions.some((a) => /^dynamodb:(PutItem|UpdateItem|DeleteItem|ConditionCheckItem)$/.test(a))) extra.push('dynamodb:TransactWriteItems');
      if (actions.includes('sqs:SendMessage')) extra.push('sqs:SendMessageBatch');
      if (actions.includes('execute-api:ManageConnections')) {
        extra.push('execute-api:PostToConnection');
        if (list(s.Resource).some((r) => JSON.stringify(r).includes('/DELETE/@connections'))) extra.push('execute-api:DeleteConnection');
      }
      actions.forEach((a) => allowed.add(a));
      const widen = actions.some((a) => /^(dynamodb|secretsmanager|execute-api):/.test(a));
      const out: Statement | undefined = actions.length ? { Effect: s.Effect, Action: [...actions, ...extra], Resource: widen ? '*' : s.Resource, ...(s.Condition && { Condition: s.Condition }) } : undefined;
      return out;
    })
    .filter((st) => st !== undefined);
  return { document: { Version: '2012-10-17', Statement: out }, allowed };
}

/** The actions routes.ts grants a function (what the least-privilege test removes one at a time). */
export function routeActions(def: FunctionDef): string[] {
  return [
    ...def.dynamodb.map((a) => `dynamodb:${a}`),
    ...(def.rateCounters ? ['dynamodb:UpdateItem'] : []),
    ...(def.s3 ?? []),
    ...(def.jwt ? ['secretsmanager:GetSecretValue'] : []),
    ...(def.manageConnections || def.closeConnections ? ['execute-api:ManageConnections'] : []),
    ...(def.queues ?? []).map((q) => `sqs:SendMessage@${QUEUE_IDS[q]}`),
  ];
}
