// The CDK stack: one table, one files bucket, the JWT secret, and the HTTP API with one Lambda per route.
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { CorsHttpMethod, HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { join } from 'node:path';
import { CORS, ROUTES, type RouteDef } from './routes';
import { TABLE_SCHEMA } from './table-schema';
import { BUNDLING } from './bundling';

export interface ChatStackProps extends StackProps {
  /** How long handlers cache bot settings (ms); 0 turns the cache off. */
  botCacheTtlMs?: number;
}

const ROOT = join(__dirname, '..');
const attr = (a: { name: string }) => ({ name: a.name, type: dynamodb.AttributeType.STRING });

export class ChatStack extends Stack {
  readonly table: dynamodb.Table;
  readonly bucket: s3.Bucket;
  readonly api: HttpApi;
  readonly functions: Record<string, NodejsFunction> = {};

  constructor(scope: Construct, id: string, props: ChatStackProps = {}) {
    super(scope, id, props);

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attr(TABLE_SCHEMA.partitionKey),
      sortKey: attr(TABLE_SCHEMA.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: dynamodb.StreamViewType[TABLE_SCHEMA.stream],
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of TABLE_SCHEMA.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: attr(gsi.partitionKey),
        sortKey: attr(gsi.sortKey),
        projectionType: dynamodb.ProjectionType.ALL,
      });
    }

    this.bucket = new s3.Bucket(this, 'Files', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      // Browsers fetch presigned file URLs directly (image previews, downloads).
      cors: [{ allowedMethods: [s3.HttpMethods.GET, s3.HttpMethods.HEAD], allowedOrigins: ['*'], maxAge: 3600 }],
    });

    const jwtSecret = new secretsmanager.Secret(this, 'JwtSecret', {
      description: 'HS256 key that signs session tokens',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });

    this.api = new HttpApi(this, 'ClientApi', {
      description: 'Client API of the chat-bot messaging service',
      corsPreflight: {
        allowOrigins: CORS.allowOrigins,
        allowMethods: CORS.allowMethods.map((m) => CorsHttpMethod[m]),
        allowHeaders: CORS.allowHeaders,
        maxAge: Duration.seconds(CORS.maxAgeSeconds),
      },
    });

    const environment = {
      TABLE_NAME: this.table.tableName,
      BUCKET_NAME: this.bucket.bucketName,
      JWT_SECRET_ARN: jwtSecret.secretArn,
      BOT_CACHE_TTL_MS: String(props.botCacheTtlMs ?? 30_000),
      NODE_OPTIONS: '--enable-source-maps',
    };

    for (const route of ROUTES) {
      const fn = this.routeFunction(route, environment);
      jwtSecret.grantRead(fn);
      this.functions[route.id] = fn;
      this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.id}-integration`, fn),
      });
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL; the Client API is under /api/client' });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BucketName', { value: this.bucket.bucketName });
  }

  /** One function per route, granted exactly the actions its route entry lists. */
  private routeFunction(route: RouteDef, environment: Record<string, string>): NodejsFunction {
    const name = route.id.replace(/(^|_)(\w)/g, (_m, _s, c: string) => c.toUpperCase());
    const fn = new NodejsFunction(this, `${name}Fn`, {
      entry: join(ROOT, route.entry),
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: 512,
      timeout: Duration.seconds(10),
      environment,
      bundling: BUNDLING,
      depsLockFilePath: join(ROOT, 'package-lock.json'),
      projectRoot: ROOT,
      logGroup: new logs.LogGroup(this, `${name}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
    });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: route.dynamodb.map((a) => `dynamodb:${a}`),
        resources: [this.table.tableArn, ...(route.index ? [`${this.table.tableArn}/index/*`] : [])],
      }),
    );
    if (route.s3?.length) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({ actions: route.s3, resources: [this.bucket.arnForObjects('bots/*')] }),
      );
    }
    return fn;
  }
}
