// Synthesizes every shape of test/support/shapes.ts into the folder given as the argument (bundling skipped:
// the templates are the same), then writes ready.json. With `--bundled`: one default stack with every function
// bundled by esbuild as `cdk deploy` does (test/infra/bundle.test.ts), its chatter kept in this process's output.
import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { ChatStack } from '../../lib/stack';
import { configsFromContext, stackName } from '../../lib/stack-config';
import { SHAPES, STAGE_CONTEXT } from './shapes';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
const dir = process.argv[2];
if (process.argv[3] === '--bundled') {
  const bundled = new App({ outdir: dir });
  new ChatStack(bundled, 'Bundled');
  bundled.synth();
  process.exit(0);
}
const app = new App({ outdir: join(dir, 'shapes'), context: NO_BUNDLING });
for (const [id, props] of Object.entries(SHAPES)) new ChatStack(app, id, props);
const staged = new App({ outdir: join(dir, 'staged'), context: { ...NO_BUNDLING, ...STAGE_CONTEXT } });
for (const config of configsFromContext(staged.node.getAllContext())) new ChatStack(staged, stackName(config.stage), config);
app.synth();
staged.synth();
const files: Record<string, string> = {};
for (const sub of ['shapes', 'staged']) {
  for (const f of readdirSync(join(dir, sub))) if (f.endsWith('.template.json')) files[f.replace(/\.template\.json$/, '')] = join(dir, sub, f);
}
// Written whole, then renamed: a reader never sees half of it.
writeFileSync(join(dir, 'ready.tmp'), JSON.stringify(files));
renameSync(join(dir, 'ready.tmp'), join(dir, 'ready.json'));
