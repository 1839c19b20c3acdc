// CDK app entry (cdk.json: "app": "npx tsx bin/app.ts"): `npx cdk synth` / `npx cdk deploy`, or `npm run deploy`.
// Settings come from context keys (lib/stack-config.ts); `--context stage=staging,prod` makes both stacks.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ChatStack } from '../lib/stack';
import { stackName, type StackConfig } from '../lib/stack-config';
import { configsFromContext } from '../lib/stack-context';

const app = new App();

function readConfigs(): StackConfig[] {
  try {
    return configsFromContext(app.node.getAllContext() as Record<string, unknown>);
  } catch (err) {
    // One readable line instead of a stack trace: these are the user's own --context values.
    console.error(`Error: ${(err as Error).message}`);
    process.exit(1);
  }
}

for (const config of readConfigs()) {
  new ChatStack(app, stackName(config.stage), {
    ...config,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
    description: `Chat-bot messaging service (${config.stage})`,
  });
}
// cdk-nag (AwsSolutions) checks every synth: a finding stops it, acknowledged ones carry their reason in lib/stack.ts.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
