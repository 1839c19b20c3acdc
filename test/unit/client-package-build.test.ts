// The built @nexus-chat/client (packages/client/build.mjs): the ES module imports in Node, the script-tag build
// exposes NexusChat.createChatClient, the .d.ts types are emitted, the package's own code is at most 15 KB
// gzipped, and `npm pack` would publish dist, README and package.json only.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';

const ROOT = join(__dirname, '..', '..');
const PKG = join(ROOT, 'packages', 'client');

let built: { ownCodeGzipBytes: number };
beforeAll(() => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `import { buildClient } from './packages/client/build.mjs'; console.log(JSON.stringify(await buildClient()));`], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  built = JSON.parse(r.stdout) as typeof built;
}, 120_000);

test('the ES module imports in Node (centrifuge resolved as a dependency) and exports createChatClient', () => {
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `const m = await import('./packages/client/dist/index.js'); const c = m.createChatClient({ apiUrl: 'http://x', clientKey: 'cli_x', storage: m.memoryStorage() }); console.log(typeof m.createChatClient, typeof c.chat, c.unread);`],
    { cwd: ROOT, encoding: 'utf8' },
  );
  expect({ status: r.status, out: r.stdout.trim(), err: r.stderr }).toEqual({ status: 0, out: 'function function 0', err: '' });
  // centrifuge is imported, not bundled, in the module an app's bundler takes.
  expect(readFileSync(join(PKG, 'dist', 'index.js'), 'utf8')).toMatch(/from "centrifuge"/);
});

test('the script-tag build exposes NexusChat.createChatClient with centrifuge inside', () => {
  const window: Record<string, unknown> = {};
  runInNewContext(readFileSync(join(PKG, 'dist', 'nexus-chat.min.js'), 'utf8'), Object.assign(window, { window, self: window }));
  const NexusChat = window.NexusChat as { createChatClient?: unknown; ChatClient?: unknown };
  expect(typeof NexusChat.createChatClient).toBe('function');
  expect(readFileSync(join(PKG, 'dist', 'nexus-chat.min.js'), 'utf8')).not.toMatch(/require\(|from"centrifuge"/);
});

test('the .d.ts types are emitted, with the extensions Node ES module resolution needs', () => {
  const index = readFileSync(join(PKG, 'dist', 'types', 'index.d.ts'), 'utf8');
  expect(index).toMatch(/createChatClient/);
  expect(index).toMatch(/from '\.\/client\.js'/);
  const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')) as { exports: { '.': { types: string; import: string } } };
  for (const f of [manifest.exports['.'].types, manifest.exports['.'].import]) expect(existsSync(join(PKG, f))).toBe(true);
});

test("the package's own code (centrifuge excluded) is at most 15 KB gzipped", () => {
  expect(built.ownCodeGzipBytes).toBeGreaterThan(1000);
  expect(built.ownCodeGzipBytes).toBeLessThanOrEqual(15 * 1024);
});

test('its manifest: a scoped ES module package, centrifuge its only dependency, publishing dist, README and package.json', () => {
  const manifest = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')) as Record<string, unknown>;
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  expect(manifest).toMatchObject({ name: '@nexus-chat/client', type: 'module', sideEffects: false, files: ['dist'], dependencies: { centrifuge: root.devDependencies.centrifuge } });
  expect(Object.keys(manifest.dependencies as object)).toEqual(['centrifuge']);
  // --ignore-scripts: the files just built are what would be packed.
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: PKG, encoding: 'utf8' });
  const [packed] = JSON.parse(r.stdout) as { files: { path: string }[] }[];
  const outside = packed.files.map((f) => f.path).filter((p) => !p.startsWith('dist/') && !['README.md', 'package.json'].includes(p));
  expect(outside).toEqual([]);
  expect(packed.files.map((f) => f.path)).toEqual(expect.arrayContaining(['README.md', 'dist/index.js', 'dist/nexus-chat.min.js', 'dist/types/index.d.ts']));
});
