// CDK assertions: table, bucket, secret, HTTP API routes (one function each) and narrow grants per function.
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ChatStack } from '../../lib/stack';
import { ROUTES } from '../../lib/routes';

// Bundling is skipped here (fast); test/infra/bundle.test.ts bundles every function for real once.
const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
const stack = new ChatStack(app, 'Test');
const template = Template.fromStack(stack);
const resources = template.toJSON().Resources as Record<string, any>;

const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId((construct.node.defaultChild ?? construct) as never);

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

test('HTTP API: CORS for any origin with Authorization and Content-Type; one route per table entry', () => {
  template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
    ProtocolType: 'HTTP',
    CorsConfiguration: Match.objectLike({
      AllowOrigins: ['*'],
      AllowHeaders: ['authorization', 'content-type'],
      AllowMethods: ['GET', 'POST', 'OPTIONS'],
    }),
  });
  const routeKeys = Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
    .map((r) => r.Properties.RouteKey)
    .sort();
  expect(routeKeys).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  expect(routeKeys).toHaveLength(7);
});

test('each route has its own function: Node 22 on arm64, with the table, bucket and secret configured', () => {
  const fnIds = ROUTES.map((r) => logicalId(stack.functions[r.id]));
  expect(new Set(fnIds).size).toBe(ROUTES.length);
  for (const id of fnIds) {
    const props = resources[id].Properties;
    expect(props.Runtime).toBe('nodejs22.x');
    expect(props.Architectures).toEqual(['arm64']);
    expect(Object.keys(props.Environment.Variables).sort()).toEqual(
      ['BOT_CACHE_TTL_MS', 'BUCKET_NAME', 'JWT_SECRET_ARN', 'NODE_OPTIONS', 'TABLE_NAME'].sort(),
    );
  }
  // Every integration points at a different function.
  const integrationTargets = Object.values(resources)
    .filter((r) => r.Type === 'AWS::ApiGatewayV2::Integration')
    .map((r) => JSON.stringify(r.Properties.IntegrationUri));
  expect(new Set(integrationTargets).size).toBe(7);
  template.hasResourceProperties('AWS::ApiGatewayV2::Integration', { PayloadFormatVersion: '2.0' });
});

test('grants are narrow: each function gets exactly its route entry actions plus reading the JWT secret', () => {
  const secretActions = ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'];
  for (const route of ROUTES) {
    const { actions, statements } = actionsOf(logicalId(stack.functions[route.id]));
    const expected = [...route.dynamodb.map((a) => `dynamodb:${a}`), ...(route.s3 ?? []), ...secretActions].sort();
    expect({ route: route.id, actions }).toEqual({ route: route.id, actions: expected });
    // No wildcard resources anywhere.
    for (const s of statements) expect(JSON.stringify(s.Resource)).not.toMatch(/"\*"/);
  }
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
  expect(Object.keys(outputs).sort()).toEqual(['ApiUrl', 'BucketName', 'TableName']);
});
