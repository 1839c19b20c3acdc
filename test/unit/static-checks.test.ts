// The static checks of `npm test`, run as tests so that they share the two cores with the suites instead of
// running before them: TypeScript over the service, its tests and tools (tsconfig.json) and over the page
// (web/tsconfig.json) and the client package (packages/client/tsconfig.json), ESLint with type-checked rules (eslint.config.mjs), and redocly's lint of docs/openapi.yaml (that the document and packages/client/src/api-types.ts are
// generated, never stale: test/unit/openapi.test.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
/**
 * The type checks run TypeScript 7's native compiler (the `typescript-7` alias): the same diagnostics as 5.9's in a
 * fifth of its CPU. typescript-eslint and openapi-typescript keep TypeScript 5.9, the API they are built on.
 */
const TSC = 'typescript-7/bin/tsc';

/** A package's command-line script under Node; its exit status and its output's lines. */
function run(script: string, args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim()) };
}

test('tsc --noEmit: the service, its tests and tools type-check', () => {
  expect(run(TSC, ['--noEmit'])).toEqual({ status: 0, output: [] });
}, 180_000);

test('tsc --noEmit -p web: the chat page type-checks against the generated API types', () => {
  expect(run(TSC, ['--noEmit', '-p', 'web'])).toEqual({ status: 0, output: [] });
}, 120_000);

test('tsc --noEmit -p packages/client: the client package type-checks with the DOM library and no Node types', () => {
  expect(run(TSC, ['--noEmit', '-p', 'packages/client'])).toEqual({ status: 0, output: [] });
}, 120_000);

test('eslint: no finding of the recommended and type-checked rules (eslint.config.mjs; `npm run lint`)', () => {
  expect(run('eslint/bin/eslint.js', ['.'])).toEqual({ status: 0, output: [] });
}, 600_000);

test('redocly lint: docs/openapi.yaml is a valid OpenAPI document with no warning (redocly.yaml)', () => {
  const r = run('@redocly/cli/bin/cli.js', ['lint', 'docs/openapi.yaml'], { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' });
  expect({ status: r.status, valid: r.output.some((l) => l.includes('Your API description is valid')), warnings: r.output.filter((l) => /\d+ warnings?\b/.test(l)) }).toEqual({
    status: 0,
    valid: true,
    warnings: [],
  });
}, 120_000);
