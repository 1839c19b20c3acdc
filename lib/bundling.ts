// esbuild options of every function: CDK's NodejsFunction uses them, and so does the bundle benchmark.
import { join } from 'node:path';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

export const NODE_TARGET = 'node22';
/**
 * Lambda hands every function its credentials in the environment: the SDK's provider chain (SSO, profiles,
 * STS, metadata services; ~90 KB minified) is replaced by an environment-only provider.
 */
export const ESBUILD_ALIAS = { '@aws-sdk/credential-provider-node': join(__dirname, '..', 'lambdas', 'core', 'lambda-credentials.ts') };

export const BUNDLING: BundlingOptions = {
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  target: NODE_TARGET,
  format: OutputFormat.CJS,
  // Bundle the AWS SDK (pinned by our lockfile, tree-shaken) rather than use the runtime's copy.
  externalModules: [],
  // Prefer the SDK's ES module builds: they tree-shake far better.
  mainFields: ['module', 'main'],
  esbuildArgs: { '--alias': Object.entries(ESBUILD_ALIAS).map(([from, to]) => `${from}=${to}`) },
};
