// esbuild options of every function: CDK's NodejsFunction uses them, and so does the bundle benchmark.
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

export const NODE_TARGET = 'node22';

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
};
