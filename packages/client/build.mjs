// Builds @nexus-chat/client into dist/: index.js (an ES module, centrifuge left to the importer's bundler),
// nexus-chat.min.js (a script tag's build: global NexusChat, centrifuge inside) and the .d.ts types (tsc).
// Run from the repository root (`npm run client:build`) or here (`npm run build`, and before `npm pack`).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = join(HERE, 'dist');
const ENTRY = join(HERE, 'src', 'index.ts');
const common = { entryPoints: [ENTRY], bundle: true, target: 'es2020', logLevel: 'silent', legalComments: 'none' };

/** The package's own code, minified, without centrifuge: the figure the size budget (15 KB gzipped) is about. */
export async function ownCodeGzipBytes() {
  const out = await build({ ...common, format: 'esm', minify: true, external: ['centrifuge'], write: false });
  return gzipSync(out.outputFiles[0].contents, { level: 9 }).length;
}

/** .d.ts files name their siblings with `.js`, as Node's ES module resolution (node16, nodenext) needs. */
function withJsExtensions(dir) {
  for (const f of readdirSync(dir)) {
    const file = join(dir, f);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/(from\s+'\.\/[\w-]+)'/g, "$1.js'").replace(/(import\('\.\/[\w-]+)'\)/g, "$1.js')"));
  }
}

export async function buildClient() {
  rmSync(DIST, { recursive: true, force: true });
  await build({ ...common, format: 'esm', external: ['centrifuge'], outfile: join(DIST, 'index.js') });
  await build({ ...common, format: 'iife', globalName: 'NexusChat', minify: true, outfile: join(DIST, 'nexus-chat.min.js') });
  // TypeScript 7's native compiler (the root's `typescript-7`): the same declarations as 5.9's, in a seventh of the time.
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript-7/package.json')), 'bin', 'tsc');
  const types = join(DIST, 'types');
  const r = spawnSync(process.execPath, [tsc, '-p', join(HERE, 'tsconfig.json'), '--noEmit', 'false', '--declaration', '--emitDeclarationOnly', '--outDir', types], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`);
  withJsExtensions(types);
  return { dir: DIST, ownCodeGzipBytes: await ownCodeGzipBytes() };
}

// Run as a script (no top-level await: the benchmark imports this module through tsx, as CommonJS).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  buildClient().then(({ dir, ownCodeGzipBytes: bytes }) => {
    console.log(`@nexus-chat/client built in ${dir}: its own code ${(bytes / 1024).toFixed(1)} KB gzipped (centrifuge excluded)`);
  });
}
