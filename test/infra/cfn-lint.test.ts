// cfn-lint on every stack shape the infra tests synthesize: no error, and each warning either fixed or listed
// below with its reason (a listed warning that no longer occurs fails too, so the list stays true).
import { spawnSync } from 'node:child_process';
import { SHAPES, templateFiles } from '../support/shapes';

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

test('cfn-lint: every synthesized template has no error and no warning that is not listed with its reason', async () => {
  // The run's one synth (test/support/shapes.ts): every shape plus two stages side by side from context.
  const files = await templateFiles();
  const all = Object.values(files);
  expect(all).toHaveLength(Object.keys(SHAPES).length + 2);
  // A template whose stack names a region is linted for that region; the others for the default one.
  const pinned = [files.AlarmTopicRealtimeOff];
  const findings = [...cfnLint(all.filter((f) => !pinned.includes(f)), 'us-east-1'), ...cfnLint(pinned, 'eu-west-1')];

  const show = (f: Finding) => `${f.Level} ${f.Rule.Id} ${f.Filename.split('/').pop()} ${f.Location.Path.join('/')}: ${f.Message}`;
  const accepted = (f: Finding) => f.Level === 'Warning' && ACCEPTED.some((a) => a.rule === f.Rule.Id && a.message.test(f.Message));
  expect(findings.filter((f) => !accepted(f)).map(show)).toEqual([]);
  // Every listed warning still happens somewhere (else remove it from the list).
  for (const a of ACCEPTED) {
    expect({ rule: a.rule, seen: findings.some((f) => f.Rule.Id === a.rule && a.message.test(f.Message)) }).toEqual({ rule: a.rule, seen: true });
    expect(a.reason).toMatch(/^[^\n]{20,300}$/);
  }
}, 120_000);
