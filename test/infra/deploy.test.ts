// The deploy wrapper's translation of options into `npx cdk deploy` context keys; nothing here talks to AWS.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { deployCommand, shellLine } from '../../bin/deploy';

const ROOT = join(__dirname, '..', '..');

test('--stage names the stack; each setting becomes a context key; cdk options after -- pass through', () => {
  const cmd = deployCommand([
    '--stage',
    'staging',
    '--realtime',
    'false',
    '--cors-origins=https://shop.example',
    '--throttle-rate',
    '50',
    '--tracing', // a boolean alone means true
    '--alarm-email',
    'ops@shop.example',
    '--',
    '--require-approval',
    'never',
  ]);
  expect(cmd).toEqual({
    command: 'npx',
    args: [
      'cdk',
      'deploy',
      'ChatBot-staging',
      ...['--context', 'stage=staging'],
      ...['--context', 'realtime=false'],
      ...['--context', 'corsOrigins=https://shop.example'],
      ...['--context', 'throttleRate=50'],
      ...['--context', 'tracing=true'],
      ...['--context', 'alarmEmail=ops@shop.example'],
      '--require-approval',
      'never',
    ],
    dryRun: false,
  });
});

test('camelCase options work too; --dry-run is noted, not passed on', () => {
  const cmd = deployCommand(['--dry-run', '--stage=prod', '--removalPolicy', 'retain', '--limits', 'RATE_MESSAGES_PER_MINUTE=30']);
  expect(cmd.dryRun).toBe(true);
  expect(cmd.args).toEqual(['cdk', 'deploy', 'ChatBot-prod', '--context', 'stage=prod', '--context', 'removalPolicy=retain', '--context', 'limits=RATE_MESSAGES_PER_MINUTE=30']);
  expect(shellLine({ ...cmd, args: [...cmd.args, '--profile', "ops's"] })).toBe(
    `npx cdk deploy ChatBot-prod --context stage=prod --context removalPolicy=retain --context limits=RATE_MESSAGES_PER_MINUTE=30 --profile 'ops'\\''s'`,
  );
});

test.each([
  [[], /--stage is required/],
  [['--realtime', 'false'], /--stage is required/],
  [['--stage', 'staging,prod'], /deploy one stage at a time/],
  [['--stage', 'staging', '--region', 'eu-west-1'], /unknown option --region \(cdk's own options go after --\)/],
  [['--stage', 'staging', 'now'], /unexpected argument "now"/],
  [['--stage', 'staging', '--memory-size'], /--memory-size needs a value/],
  [['--stage', 'a', '--stage', 'b'], /--stage is given twice/],
  // The app's own checks run before cdk does.
  [['--stage', 'staging', '--architecture', 'sparc'], /architecture must be arm64 or x86_64: "sparc"/],
  [['--stage', 'staging', '--throttle-burst', 'lots'], /context throttleBurst must be a whole number, not "lots"/],
])('%o is refused: %s', (argv, message) => {
  expect(() => deployCommand(argv)).toThrow(message);
});

test('npm run deploy -- --dry-run prints the command; a bad option exits 2 with usage, before cdk runs', () => {
  const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
  const ok = spawnSync(tsx, ['bin/deploy.ts', '--stage', 'staging', '--realtime', 'false', '--dry-run'], { cwd: ROOT, encoding: 'utf8' });
  expect({ status: ok.status, stdout: ok.stdout.trim() }).toEqual({
    status: 0,
    stdout: 'npx cdk deploy ChatBot-staging --context stage=staging --context realtime=false',
  });
  const bad = spawnSync(tsx, ['bin/deploy.ts', '--stage', 'staging', '--memory-size', 'big'], { cwd: ROOT, encoding: 'utf8' });
  expect(bad.status).toBe(2);
  expect(bad.stderr).toMatch(/^Error: context memorySize must be a whole number, not "big"\nusage: npm run deploy -- --stage <name>/);
}, 30_000);
