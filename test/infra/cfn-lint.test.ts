// cfn-lint on every stack shape the infra tests synthesize: no error, and each warning either fixed or listed
// below with its reason (a listed warning that no longer occurs fails too, so the list stays true).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ChatStack, type ChatStackProps } from '../../lib/stack';
import { configsFromContext, stackName } from '../../lib/stack-config';

// Bundling is skipped (the templates are the same; test/infra/bundle.test.ts bundles for real).
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/** The shapes test/infra synthesizes: defaults, realtime off, alarms both ways, every setting, a pinned region. */
const SHAPES: Record<string, ChatStackProps> = {
  Defaults: {},
  RealtimeOff: { realtime: false },
  AlarmEmailEveryOption: { tracing: true, removalPolicy: 'destroy', alarmEmail: 'ops@shop.example', wsAccessLogs: true, architecture: 'x86_64' },
  AlarmTopicRealtimeOff: { realtime: false, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', env: { region: 'eu-west-1' } },
  EverySetting: {
    stage: 'staging',
    corsOrigins: ['https://shop.example', 'http://localhost:8080'],
    logRetentionDays: 7,
    removalPolicy: 'destroy',
    memorySize: 1024,
    architecture: 'x86_64',
    wsAccessLogs: true,
    botCacheTtlMs: 0,
    throttle: { rateLimit: 10, burstLimit: 20 },
    limits: { RATE_MESSAGES_PER_MINUTE: 30, MAX_CHATS_PER_USER: 5 },
  },
  InfiniteLogs: { logRetentionDays: 9999 },
};

/** Warnings we accept, each with its reason. Errors are never accepted. */
const ACCEPTED: { rule: string; message: RegExp; reason: string }[] = [
  {
    rule: 'W3005',
    message: /^'\w+' dependency already enforced by a 'GetAtt' at 'Resources\/\w+\/Properties\/Role'$/,
    reason:
      'CDK makes every Lambda function (ours and its own custom-resource providers) DependsOn its role as well as GetAtt-ing it: redundant, harmless, and not ours to remove',
  },
];

interface Finding {
  Rule: { Id: string };
  Level: string;
  Message: string;
  Filename: string;
  Location: { Path: (string | number)[] };
}

function cfnLint(files: string[], region: string): Finding[] {
  const run = spawnSync('cfn-lint', ['--format', 'json', '--regions', region, '--', ...files], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error('cfn-lint is not on PATH: install it with `pip install cfn-lint` (version 1.51 or later), then run the test again');
  }
  if (run.error) throw run.error;
  // Exit codes are bit flags of what was found (2 error, 4 warning, 8 informational); 1 is a failure of cfn-lint itself.
  if (run.status === 1 || !run.stdout.trim().startsWith('[')) throw new Error(`cfn-lint failed (exit ${run.status}): ${run.stderr || run.stdout}`);
  return JSON.parse(run.stdout) as Finding[];
}

test('cfn-lint: every synthesized template has no error and no warning that is not listed with its reason', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
  try {
    const app = new App({ outdir, context: NO_BUNDLING });
    for (const [id, props] of Object.entries(SHAPES)) new ChatStack(app, id, props);
    // And two stages side by side from context, as bin/app.ts makes them.
    const staged = new App({ outdir: join(outdir, 'staged'), context: { ...NO_BUNDLING, stage: 'staging,prod', removalPolicy: 'destroy' } });
    for (const config of configsFromContext(staged.node.getAllContext())) new ChatStack(staged, stackName(config.stage), config);
    app.synth();
    staged.synth();
    const templates = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.template.json')).map((f) => join(dir, f));
    const all = [...templates(outdir), ...templates(join(outdir, 'staged'))];
    expect(all).toHaveLength(Object.keys(SHAPES).length + 2);
    // A template whose stack names a region is linted for that region; the others for the default one.
    const pinned = all.filter((f) => f.endsWith('AlarmTopicRealtimeOff.template.json'));
    const findings = [...cfnLint(all.filter((f) => !pinned.includes(f)), 'us-east-1'), ...cfnLint(pinned, 'eu-west-1')];

    const show = (f: Finding) => `${f.Level} ${f.Rule.Id} ${f.Filename.split('/').pop()} ${f.Location.Path.join('/')}: ${f.Message}`;
    const accepted = (f: Finding) => f.Level === 'Warning' && ACCEPTED.some((a) => a.rule === f.Rule.Id && a.message.test(f.Message));
    expect(findings.filter((f) => !accepted(f)).map(show)).toEqual([]);
    // Every listed warning still happens somewhere (else remove it from the list).
    for (const a of ACCEPTED) {
      expect({ rule: a.rule, seen: findings.some((f) => f.Rule.Id === a.rule && a.message.test(f.Message)) }).toEqual({ rule: a.rule, seen: true });
      expect(a.reason).toMatch(/^[^\n]{20,300}$/);
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}, 120_000);
