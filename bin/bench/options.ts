// The benchmark's command line (`node:util` parseArgs), read once: what every phase is told, never changed.
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { NOT_FOUND, ROUTES, WS_ROUTES, type FunctionDef } from '../../lib/routes';
import { PUBLISHER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER } from '../../lib/consumers';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    before: { type: 'string' },
  },
});
if (values.before !== undefined && (values.before === '' || values.before.startsWith('--'))) {
  throw new Error('--before needs a git ref (a commit, a tag, HEAD~1...)');
}

export const options = { quick: values.quick!, json: values.json!, before: values.before };
export const ROOT = join(__dirname, '..', '..');

/** A line of the tables (stdout); with --json only the JSON is printed. */
export const out = (line: string): void => {
  if (!options.json) console.log(line);
};

/** Every function CDK deploys, in the order of the tables. */
export const FUNCTIONS: FunctionDef[] = [...ROUTES, ...WS_ROUTES, PUBLISHER, WEBHOOK_DISPATCHER, WEBHOOK_DELIVERER, NOT_FOUND];
