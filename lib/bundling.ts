// esbuild options of every function: CDK's NodejsFunction uses them, and so does the bundle benchmark.
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

export const NODE_TARGET = 'node22';
export const BUNDLING: BundlingOptions = {
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  target: NODE_TARGET,
  format: OutputFormat.CJS,
  // Bundle what the functions use of the AWS SDK (util-dynamodb; pinned by our lockfile) rather than the runtime's copy.
  externalModules: [],
  // Prefer ES module builds: they tree-shake far better.
  mainFields: ['module', 'main'],
};
