// `npm ci` accepts the lockfile: it lists every package npm needs on any platform (optional platform builds
// included), so CI and a fresh clone install exactly what was tested. `--dry-run` checks without installing.
import { spawnSync } from 'node:child_process';
import { ROOT } from '../support/local-process';

test('npm ci accepts package-lock.json (in sync with package.json, every platform package listed)', () => {
  const run = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect({ status: run.status, refused: run.stderr.split('\n').filter((l) => /error|Missing/.test(l)) }).toEqual({ status: 0, refused: [] });
});
