// CDK app entry (cdk.json: "app": "npx tsx bin/app.ts"): `npx cdk synth` / `npx cdk deploy`.
import { App } from 'aws-cdk-lib';
import { ChatStack } from '../lib/stack';

const app = new App();
const stage = (app.node.tryGetContext('stage') as string | undefined) ?? 'dev';
if (!/^[a-z][a-z0-9-]{0,20}$/.test(stage)) throw new Error(`context stage must be lower-case letters, digits and dashes: "${stage}"`);

const realtimeContext = String(app.node.tryGetContext('realtime') ?? 'true');
if (!['true', 'false'].includes(realtimeContext)) throw new Error(`context realtime must be true or false: "${realtimeContext}"`);

new ChatStack(app, `ChatBot-${stage}`, {
  realtime: realtimeContext === 'true',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  description: `Chat-bot messaging service (${stage})`,
});
