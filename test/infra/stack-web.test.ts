// CDK assertions on the hosted chat page and widget (lib/stack-web.ts): a private bucket only the distribution
// reads, HTTPS, what each deploy copies (config.json naming this stack's API), the outputs; none of it when off.
// The web build itself (widget.js among its files) is checked on a real synth in bundle.test.ts.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { loadShape } from '../support/cdk-template';
import { SHAPES, template as shape, templateFiles, type StackIds } from '../support/shapes';
import { ofType, propsOf, resourcesOf, type Intrinsic, type Resources, type Statement } from './cfn';

let template: Template;
let resources: Resources;
let ids: StackIds;
let web: NonNullable<StackIds['web']>;
beforeAll(async () => {
  ({ template, ids } = await loadShape('Defaults'));
  resources = resourcesOf(template);
  web = ids.web!;
});
const domain = () => ({ 'Fn::GetAtt': [web.distribution, 'DomainName'] });
const outputs = (t: Template) => (t.toJSON() as { Outputs: Record<string, { Value: unknown }> }).Outputs;

test('the web bucket is private: public access blocked, ACLs off, encrypted, SSL only; only this distribution may read it, through Origin Access Control', () => {
  expect(propsOf(resources, web.bucket)).toMatchObject({
    PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
    OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    LoggingConfiguration: { DestinationBucketName: { Ref: ids.accessLogsBucket }, LogFilePrefix: 'web/' },
  });
  expect(propsOf(resources, web.bucket)).not.toHaveProperty('WebsiteConfiguration');
  const [[, policy]] = ofType<{ PolicyDocument: { Statement: (Statement & { Principal: unknown })[] } }>(template, 'AWS::S3::BucketPolicy', { Properties: { Bucket: { Ref: web.bucket } } });
  const objects = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [web.bucket, 'Arn'] }, '/*']] };
  expect(policy.Properties.PolicyDocument.Statement).toEqual([
    expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    {
      Effect: 'Allow',
      Action: 's3:GetObject',
      Principal: { Service: 'cloudfront.amazonaws.com' },
      Resource: objects,
      Condition: { StringEquals: { 'AWS:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':cloudfront::', { Ref: 'AWS::AccountId' }, ':distribution/', { Ref: web.distribution }]] } } },
    },
  ]);
  // Origin Access Control (SigV4 on every request), not the legacy origin access identity.
  template.resourceCountIs('AWS::CloudFront::CloudFrontOriginAccessIdentity', 0);
  const [[oac, control]] = ofType<{ OriginAccessControlConfig: Record<string, unknown> }>(template, 'AWS::CloudFront::OriginAccessControl');
  expect(control.Properties.OriginAccessControlConfig).toMatchObject({ OriginAccessControlOriginType: 's3', SigningBehavior: 'always', SigningProtocol: 'sigv4' });
  template.hasResourceProperties('AWS::CloudFront::Distribution', {
    DistributionConfig: Match.objectLike({
      Origins: [Match.objectLike({ DomainName: { 'Fn::GetAtt': [web.bucket, 'RegionalDomainName'] }, OriginAccessControlId: { 'Fn::GetAtt': [oac, 'Id'] }, S3OriginConfig: { OriginAccessIdentity: '' } })],
    }),
  });
});

test("the distribution: HTTP redirected to HTTPS, GET and HEAD only, index.html at /, CloudFront's security headers, cached as the files say", () => {
  template.resourceCountIs('AWS::CloudFront::Distribution', 1);
  template.hasResourceProperties('AWS::CloudFront::Distribution', {
    DistributionConfig: Match.objectLike({
      DefaultRootObject: 'index.html',
      DefaultCacheBehavior: Match.objectLike({
        ViewerProtocolPolicy: 'redirect-to-https',
        AllowedMethods: ['GET', 'HEAD'],
        Compress: true,
        // AWS's managed policies: SecurityHeadersPolicy (HSTS, nosniff, frame options, referrer policy) and
        // CachingOptimized (keeps the objects' own Cache-Control, gzip and brotli).
        ResponseHeadersPolicyId: '67f7725c-6f97-4210-82d7-5512b31e9d03',
        CachePolicyId: '658327ea-f89d-4fab-a63d-7e88639e58f6',
      }),
    }),
  });
});

test('each deploy copies the web build and a config.json naming this stack\'s API, for 5 minutes of caching, and invalidates every path', async () => {
  const [[, deployment]] = ofType<{
    SourceObjectKeys: string[];
    SourceMarkers: Record<string, unknown>[];
    [k: string]: unknown;
  }>(template, 'Custom::CDKBucketDeployment');
  expect(deployment.Properties).toMatchObject({
    DestinationBucketName: { Ref: web.bucket },
    DistributionId: { Ref: web.distribution },
    DistributionPaths: ['/*'],
    WaitForDistributionInvalidation: true,
    Prune: true,
    RetainOnDelete: false,
    SystemMetadata: { 'cache-control': 'public, max-age=300' },
  });
  // The sources as the cloud assembly holds them: the web build (web/, bundled at a real synth) and config.json.
  const dir = dirname((await templateFiles()).Defaults);
  const manifest = JSON.parse(readFileSync(join(dir, 'Defaults.assets.json'), 'utf8')) as { files: Record<string, { source: { path: string } }> };
  const sources = deployment.Properties.SourceObjectKeys.map((key) => resolve(dir, manifest.files[key.replace(/\.zip$/, '')].source.path));
  expect(sources[0]).toBe(resolve(__dirname, '../../web'));
  const raw = readFileSync(join(sources[1], 'config.json'), 'utf8');
  // Markers stand for deploy-time values; the deployment's handler writes each value in its place.
  const markers = deployment.Properties.SourceMarkers[1];
  const config = JSON.parse(raw, (_k, v: unknown) => (typeof v === 'string' && v in markers ? markers[v] : v)) as unknown;
  expect(config).toEqual({ api_url: { 'Fn::GetAtt': [ids.api, 'ApiEndpoint'] } });
  // What the chat page reads beside itself (web/config.ts): this file and this field.
  expect(readFileSync(join(__dirname, '../../web/config.ts'), 'utf8')).toMatch(/fetch\('config\.json'[^]*file\.api_url/);
});

test("outputs: the chat page's URL and the widget's script tag (widget.js from the distribution, data-api-url the stack's API)", () => {
  const out = outputs(template);
  expect(out.WebUrl.Value).toEqual({ 'Fn::Join': ['', ['https://', domain(), '/']] });
  expect(out.WidgetScriptTag.Value).toEqual({
    'Fn::Join': ['', ['<script src="https://', domain(), '/widget.js" data-api-url="', { 'Fn::GetAtt': [ids.api, 'ApiEndpoint'] }, '" data-client-key="cli_…" async></script>']],
  });
});

test('webHosting off: no web bucket, distribution or deployment, no outputs for them, CORS as given', async () => {
  expect(SHAPES.RealtimeOff.webHosting).toBe(false);
  const off = Template.fromJSON(await shape('RealtimeOff'));
  for (const type of ['AWS::CloudFront::Distribution', 'AWS::CloudFront::OriginAccessControl', 'Custom::CDKBucketDeployment']) off.resourceCountIs(type, 0);
  off.resourceCountIs('AWS::S3::Bucket', 2);
  expect(Object.keys(outputs(off))).not.toEqual(expect.arrayContaining(['WebUrl']));
  expect(Object.keys(outputs(off))).not.toContain('WidgetScriptTag');
  off.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP', CorsConfiguration: Match.objectLike({ AllowOrigins: ['*'] }) });
});

test("with CORS open to any origin, the hosted page's origin is not added (* covers it)", () => {
  const api = Object.values(resources).find((r) => r.Type === 'AWS::ApiGatewayV2::Api' && 'CorsConfiguration' in r.Properties)!;
  expect((api.Properties.CorsConfiguration as { AllowOrigins: (string | Intrinsic)[] }).AllowOrigins).toEqual(['*']);
});
