// The benchmark's command line (`node:util` parseArgs), read once: what every phase is told, never changed.
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { type FunctionDef } from '../../lib/routes';
import { ALL_FUNCTIONS } from '../../lib/consumers';

const { values } = parseArgs({
  options: {
    // Fewer samples: round trips, realtime messages, seconds of load, cold starts.
    quick: { type: 'boolean', default: false },
    // One JSON object on stdout instead of the tables.
    json: { type: 'boolean', default: false },
    // Also bundle and cold-start the functions of this commit, interleaved with this code's.
    before: { type: 'string' },
    // Cold starts per function and variant (default 5, 3 with --quick): 1 when only checking that the phase runs.
    'cold-runs': { type: 'string' },
    // Only the scale phase (about 30 s): its table, or with --json its block; writes no results.
    'scale-only': { type: 'boolean', default: false },
    // Only the stream consumers' phase (about 30 s): its lines, or with --json its block; writes no results.
    'stream-only': { type: 'boolean', default: false },
    // Where the results go as JSON (a full run: benchmarks/results.json; a quick run writes none unless told).
    out: { type: 'string' },
  },
});
if (values.before !== undefined && (values.before === '' || values.before.startsWith('--'))) {
  throw new Error('--before needs a git ref (a commit, a tag, HEAD~1...)');
}
const coldRuns = values['cold-runs'] === undefined ? (values.quick ? 3 : 5) : Number(values['cold-runs']);
if (!Number.isInteger(coldRuns) || coldRuns < 1) throw new Error(`--cold-runs needs a whole number of at least 1, not ${values['cold-runs']}`);

if (values.out !== undefined && (values.out === '' || values.out.startsWith('--'))) throw new Error('--out needs a file name');

export const ROOT = join(__dirname, '..', '..');
/** The results of full runs, kept with the code they measured (docs/benchmarks.md "Results"). */
export const RESULTS_FILE = join('benchmarks', 'results.json');
export const options = {
  quick: values.quick,
  json: values.json,
  before: values.before,
  coldRuns,
  scaleOnly: values['scale-only'],
  streamOnly: values['stream-only'],
  out: values.out ?? (values.quick || values['scale-only'] || values['stream-only'] ? undefined : RESULTS_FILE),
};

/** Every function CDK deploys, in the order of the tables. */
export const FUNCTIONS: FunctionDef[] = ALL_FUNCTIONS;
