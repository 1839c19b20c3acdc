// esbuild options of every function: CDK's NodejsFunction uses them, and so does the bundle benchmark.
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

export const NODE_TARGET = 'node22';

/** The default credential chain's fallbacks after the environment: never loaded on Lambda. */
export const RUNTIME_CREDENTIAL_PROVIDERS = [
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@smithy/credential-provider-imds',
];
export const BUNDLING: BundlingOptions = {
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  target: NODE_TARGET,
  format: OutputFormat.CJS,
  // The SDK clients are bundled (pinned by our lockfile; loading the runtime's copy was slower). Left to the
  // runtime's copy: the credential providers the default chain imports only when the environment holds no
  // credentials, which on Lambda it always does (~90 KB of every bundle, SSO/STS clients among them).
  externalModules: RUNTIME_CREDENTIAL_PROVIDERS,
  // Prefer ES module builds: they tree-shake far better.
  mainFields: ['module', 'main'],
};
