// Synthesizes every shape of test/support/shapes.ts into the folder given as the argument (bundling skipped:
// the templates are the same), and beside each template what a test cannot read from it (the logical IDs of
// the stack's constructs, cdk-nag's report, CDK's warnings), then writes ready.json. With `--bundled`: one
// default stack with every function bundled by esbuild as `cdk deploy` does (test/infra/bundle.test.ts), its
// chatter kept in this process's output.
import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { App, Validations, type CfnElement } from 'aws-cdk-lib';
import { SynthesisMessageLevel } from 'aws-cdk-lib/cx-api';
import type { IConstruct } from 'constructs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ChatStack } from '../../lib/stack';
import { stackName } from '../../lib/stack-config';
import { configsFromContext } from '../../lib/stack-context';
import { REFUSED_PROPS, SHAPES, STAGE_CONTEXT, type Ack, type NagReport, type StackIds, type Violation } from './shapes';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const dir = process.argv[2];
if (process.argv[3] === '--bundled') {
  // CDK's built-in CloudFormation validation off here too: cfn-lint lints the same templates (bundling aside).
  const bundled = new App({ outdir: dir, builtinCloudFormationValidation: false });
  new ChatStack(bundled, 'Bundled');
  bundled.synth();
  process.exit(0);
}
const write = (file: string, value: unknown) => writeFileSync(join(dir, file), JSON.stringify(value, null, 1));

// Every acknowledgement as the stack makes it (scope path, rule, reason), recorded on its way through.
const acks: Ack[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- kept to be called with the wrapped instance as `this` (acknowledge.apply below)
const acknowledge = Validations.prototype.acknowledge;
Validations.prototype.acknowledge = function (this: { scope: IConstruct }, ...rules) {
  for (const r of rules) acks.push({ path: this.scope.node.path, id: r.id, reason: r.reason });
  acknowledge.apply(this, rules);
};

// CDK's built-in CloudFormation validation only warns, and costs ~12 s here: test/infra/cfn-lint.test.ts lints
// these templates instead, errors and warnings both.
const NO_CFN_VALIDATION = { builtinCloudFormationValidation: false };
const app = new App({ ...NO_CFN_VALIDATION, outdir: join(dir, 'shapes'), context: NO_BUNDLING });
const stacks = Object.entries(SHAPES).map(([id, props]) => new ChatStack(app, id, props));
// Two stages from context, cdk-nag on as bin/app.ts has it: a finding stops this synth (and every CDK suite).
const staged = new App({ ...NO_CFN_VALIDATION, outdir: join(dir, 'staged'), context: { ...NO_BUNDLING, ...STAGE_CONTEXT } });
const stagedStacks = configsFromContext(staged.node.getAllContext() as Record<string, unknown>).map((config) => new ChatStack(staged, stackName(config.stage), config));
const stagedNag = new AwsSolutionsChecks(staged);
// What the plugin was given and found, so a test sees that it ran (CDK's report leaves out a clean run).
const validate = stagedNag.validate.bind(stagedNag);
stagedNag.validate = (context) => {
  const report = validate(context);
  write('staged.nag.json', { templates: context.templatePaths.map((p) => basename(p)).sort(), violations: report.violations.map((v) => v.ruleName) });
  return report;
};
Validations.of(staged).addPlugins(stagedNag);
const assembly = app.synth();
staged.synth();

function ids(s: ChatStack): StackIds {
  const id = (c: IConstruct) => s.getLogicalId((c.node.defaultChild ?? c) as CfnElement);
  const each = (f: (fn: ChatStack['functions'][string]) => IConstruct) => Object.fromEntries(Object.entries(s.functions).map(([k, fn]) => [k, id(f(fn))]));
  return {
    functions: each((fn) => fn),
    logGroups: each((fn) => fn.logGroup),
    table: id(s.table),
    bucket: id(s.bucket),
    accessLogsBucket: id(s.accessLogsBucket),
    jwtSecret: id(s.jwtSecret),
    api: id(s.api),
    wsApi: s.wsApi && id(s.wsApi),
    queues: { webhooks: id(s.queues.webhooks), webhooks_slow: id(s.queues.webhooks_slow), webhooks_dlq: id(s.queues.webhooks_dlq), tasks: id(s.queues.tasks), tasks_dlq: id(s.queues.tasks_dlq) },
    webhookDispatcherDlq: id(s.webhookDispatcherDlq),
    publisherDlq: s.publisherDlq && id(s.publisherDlq),
    redoQueues: {
      publisher: { queue: id(s.node.findChild('PublisherRedoQueue')), dlq: id(s.redoDlqs.publisher) },
      webhook_dispatcher: { queue: id(s.node.findChild('WebhookDispatcherRedoQueue')), dlq: id(s.redoDlqs.webhook_dispatcher) },
    },
    uploadCompleterDlq: id(s.uploadCompleterDlq),
    web: s.web && { bucket: id(s.web.bucket), distribution: id(s.web.distribution), deployment: id(s.node.findChild('WebDeployment').node.findChild('CustomResource')) },
    // Only a topic of our own has one (alarmTopicArn imports an existing topic).
    alarmTopic: s.alarmTopic?.node.defaultChild ? id(s.alarmTopic) : undefined,
  };
}

const violations = (pack: AwsSolutionsChecks, s: ChatStack): Violation[] =>
  pack.validateScope(s).violations.map((v) => ({ ruleName: v.ruleName, severity: v.severity, paths: v.violatingResources.map((r) => r.constructPath ?? '') }));
// What each acknowledgement hides: the same checks with acknowledgements ignored (as if none were made). This
// replaces cdk-nag's private isAcknowledged: were it renamed, nothing would be found and every acknowledgement's
// test would fail, never pass.
const unacknowledged = new AwsSolutionsChecks();
(unacknowledged as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;

for (const s of [...stacks, ...stagedStacks]) write(`${s.stackName}.ids.json`, ids(s));
for (const s of stacks) {
  const report: NagReport = {
    violations: violations(new AwsSolutionsChecks(), s),
    findings: violations(unacknowledged, s),
    acks: acks.filter((a) => a.path.startsWith(`${s.node.path}/`)),
    // What Annotations.fromStack(...).findWarning / findError would give, from the synth already made.
    annotations: assembly
      .getStackArtifact(s.artifactId)
      .messages.filter((m) => m.level === SynthesisMessageLevel.WARNING || m.level === SynthesisMessageLevel.ERROR)
      .map((m) => `${m.level} ${m.id}: ${JSON.stringify(m.entry.data)}`),
  };
  write(`${s.stackName}.nag.json`, report);
}

// The stack checks its own props (resolveConfig), each refusal before anything is made: cheap to try here.
const refused = Object.fromEntries(
  Object.entries(REFUSED_PROPS).map(([name, props]) => {
    try {
      new ChatStack(new App({ context: NO_BUNDLING }), 'Refused', props);
      return [name, null];
    } catch (err) {
      return [name, (err as Error).message];
    }
  }),
);
write('refused.json', refused);

const files: Record<string, string> = {};
for (const sub of ['shapes', 'staged']) {
  for (const f of readdirSync(join(dir, sub))) if (f.endsWith('.template.json')) files[f.replace(/\.template\.json$/, '')] = join(dir, sub, f);
}
// Written whole, then renamed: a reader never sees half of it.
writeFileSync(join(dir, 'ready.tmp'), JSON.stringify(files));
renameSync(join(dir, 'ready.tmp'), join(dir, 'ready.json'));
