// The run's order: the longest test files first, so that no long file starts last while the other worker sits
// idle. Jest's own sequencer orders by the durations it cached on earlier runs of this checkout; on a fresh clone
// (CI) it has none and falls back to file size, which puts short files with long runs (the IAM tier, the bench,
// the static checks, cfn-lint, the bundle synth) at the end. test-durations.json gives it the milliseconds of a whole
// run on two cores for files it has no cache of; refresh it after a run with
// `npx jest --json --outputFile=/tmp/times.json && node test/support/sequencer.js /tmp/times.json`.
const { join, relative } = require('node:path');
const { writeFileSync } = require('node:fs');
const process = require('node:process');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..', '..');
const FILE = join(__dirname, 'test-durations.json');

class LongestFirst extends Sequencer {
  time(test) {
    return super.time(test) ?? require(FILE)[relative(ROOT, test.path)];
  }
}

if (require.main === module) {
  const run = require(require('node:path').resolve(process.argv[2]));
  const rows = run.testResults.map((t) => [relative(ROOT, t.name), t.endTime - t.startTime]).sort((a, b) => b[1] - a[1]);
  writeFileSync(FILE, `${JSON.stringify(Object.fromEntries(rows), null, 1)}\n`);
}

module.exports = LongestFirst;
