// The chat page and the widget hosted by the stack (setting webHosting, on by default): a private bucket that
// only a CloudFront distribution reads (Origin Access Control), filled on every deploy by a BucketDeployment with
// the web build (made at synth by esbuild, lib/web-build.ts: no Docker, no network) and a config.json naming this
// stack's API. Page and widget call the API on its own origin, so CORS allows the distribution's (docs/deploy.md).
import { AssetHashType, Aws, CfnOutput, DefaultStackSynthesizer, DockerImage, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { join } from 'node:path';
import { acknowledge, wildcardFinding } from './stack-nag';
import type { StackParts } from './stack-parts';
import { buildWebFiles } from './web-build';

/**
 * How long a browser (and an edge, between deploys) keeps a hosted file: a new widget.js reaches a site's
 * visitors within this after a deploy, since each deploy also invalidates every path at the edges.
 */
export const WEB_MAX_AGE_SECONDS = 300;
/** The distribution's response headers: CloudFront's managed SecurityHeadersPolicy (HSTS a year, nosniff, SAMEORIGIN frames, strict-origin-when-cross-origin). */
export const WEB_HEADERS = cloudfront.ResponseHeadersPolicy.SECURITY_HEADERS;
/** What the chat page reads beside itself (web/config.ts): the API's base URL; the client key comes in its link. */
export const WEB_CONFIG_FILE = 'config.json';

export interface WebHosting {
  bucket: s3.Bucket;
  distribution: cloudfront.Distribution;
  /** https://<distribution domain>: the page's and the widget's origin. */
  origin: string;
}

/** The bucket and its distribution; made before the API, whose CORS allows the distribution's origin. */
export function webHosting(stack: StackParts, accessLogs: s3.Bucket): WebHosting {
  const bucket = new s3.Bucket(stack, 'Web', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    serverAccessLogsBucket: accessLogs,
    serverAccessLogsPrefix: 'web/',
    // It holds only what each deploy writes, which the deployment deletes with the stack (retainOnDelete false).
    removalPolicy: RemovalPolicy.DESTROY,
  });
  // Origin Access Control names are per account: the region keeps two regions' stacks of one stage apart.
  const oac = new cloudfront.S3OriginAccessControl(stack, 'WebOriginAccess', { originAccessControlName: `${stack.stackName}-web-${stack.region}` });
  const distribution = new cloudfront.Distribution(stack, 'WebDistribution', {
    comment: `Chat page and widget (${stack.config.stage})`,
    defaultRootObject: 'index.html',
    httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
    defaultBehavior: {
      origin: origins.S3BucketOrigin.withOriginAccessControl(bucket, { originAccessControl: oac }),
      viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
      // Keeps what the objects' Cache-Control says (WEB_MAX_AGE_SECONDS); gzip and brotli at the edge.
      cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
      responseHeadersPolicy: WEB_HEADERS,
      compress: true,
    },
  });
  acknowledge(
    distribution,
    'AwsSolutions-CFR1',
    'The widget is loaded by the visitors of any site that embeds it, wherever they are: no country is to be refused.',
  );
  acknowledge(
    distribution,
    'AwsSolutions-CFR2',
    'Static public files (page, widget) read through a cache; the API they call has its own throttles, and a WAF would bill for every request.',
  );
  acknowledge(
    distribution,
    'AwsSolutions-CFR3',
    "CloudFront's logs need an ACL-enabled bucket and record every host page's visitor; the API's access logs record every use.",
  );
  acknowledge(
    distribution,
    'AwsSolutions-CFR4',
    "The distribution's default *.cloudfront.net certificate, whose TLS floor CloudFront fixes; a custom domain's certificate sets TLS 1.2.",
  );
  return { bucket, distribution, origin: `https://${distribution.distributionDomainName}` };
}

/**
 * The web build and config.json into the bucket, then every path invalidated at the edges; and the outputs: the
 * page's URL and the widget's script tag. After the API: config.json names it.
 */
export function deployWeb(stack: StackParts, hosting: WebHosting): void {
  const root = join(__dirname, '..');
  const build = s3deploy.Source.asset(join(root, 'web'), {
    // Hashed by what was built: the page imports the client package, outside web/.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('no-docker-needed'),
      local: {
        tryBundle(outputDir: string) {
          buildWebFiles(root, outputDir);
          return true;
        },
      },
    },
  });
  const config = s3deploy.Source.jsonData(WEB_CONFIG_FILE, { api_url: stack.api.apiEndpoint });
  const deployment = new s3deploy.BucketDeployment(stack, 'WebDeployment', {
    sources: [build, config],
    destinationBucket: hosting.bucket,
    cacheControl: [s3deploy.CacheControl.setPublic(), s3deploy.CacheControl.maxAge(Duration.seconds(WEB_MAX_AGE_SECONDS))],
    distribution: hosting.distribution,
    distributionPaths: ['/*'],
    // Deleting the stack empties the bucket, which then goes too.
    retainOnDelete: false,
  });
  // CDK's own handler (one per stack, run on deploys only): its role and runtime are CDK's.
  const cdkRole = "CDK's bucket-deployment handler, run on deploys only to copy the web build into its bucket";
  acknowledge(deployment.handlerRole, 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', `${cdkRole}: CDK's basic execution policy.`);
  for (const finding of ['Action::s3:GetObject*', 'Action::s3:GetBucket*', 'Action::s3:List*', 'Action::s3:DeleteObject*', 'Action::s3:Abort*']) {
    acknowledge(deployment.handlerRole, `AwsSolutions-IAM5[${finding}]`, `${cdkRole}: CDK grants it read and sync actions by prefix.`);
  }
  acknowledge(deployment.handlerRole, wildcardFinding(stack, `${hosting.bucket.bucketArn}/*`), `${cdkRole}: it writes and prunes every object of the web bucket.`);
  const assets = `arn:${Aws.PARTITION}:s3:::cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-${stack.account}-${stack.region}/*`;
  acknowledge(deployment.handlerRole, wildcardFinding(stack, assets), `${cdkRole}: it reads the build from CDK's asset bucket.`);
  acknowledge(deployment.handlerRole, 'AwsSolutions-IAM5[Resource::*]', `${cdkRole}: CDK grants its CloudFront invalidation on every distribution.`);
  const handler = stack.node.children.find((c) => c.node.id.startsWith('Custom::CDKBucketDeployment'));
  acknowledge(handler!, 'AwsSolutions-L1', `${cdkRole}: its Python runtime is the one CDK's handler is built and tested for.`);
  new CfnOutput(stack, 'WebUrl', { value: `${hosting.origin}/`, description: 'The chat page: open it with ?client_key=cli_…' });
  new CfnOutput(stack, 'WidgetScriptTag', {
    value: `<script src="${hosting.origin}/widget.js" data-api-url="${stack.api.apiEndpoint}" data-client-key="cli_…" async></script>`,
    description: "The widget's script tag for any site: put the bot's client key in data-client-key",
  });
}
