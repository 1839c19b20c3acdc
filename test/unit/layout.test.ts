// The layout of lambdas/ (docs/architecture.md "Layout"): folders by concern, imports one way, no cycles.
// entry points (client, bot, realtime) → http | centrifuge → domain → aws → shared; a layer may skip down,
// never import up or sideways (http and centrifuge know nothing of each other).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LAMBDAS = join(__dirname, '..', '..', 'lambdas');
const RANK: Record<string, number> = { client: 4, bot: 4, realtime: 4, storage: 4, http: 3, centrifuge: 3, domain: 2, aws: 1, shared: 0 };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every module of lambdas/ (path relative to it, no extension) and the lambdas/ modules it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(LAMBDAS)) {
    const from = relative(LAMBDAS, file).replace(/\.ts$/, '');
    const specs = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
    graph.set(
      from,
      specs.map((s) => relative(LAMBDAS, resolve(dirname(file), s))),
    );
  }
  return graph;
}

const folder = (module: string): string => module.split('/')[0];

test('every folder of lambdas/ has a place in the layering', () => {
  expect([...new Set([...importGraph().keys()].map(folder))].sort()).toEqual(Object.keys(RANK).sort());
});

test('imports go one way: entry points → http | centrifuge → domain → aws → shared', () => {
  const against: string[] = [];
  for (const [from, targets] of importGraph()) {
    for (const to of targets) {
      if (folder(to) === folder(from)) continue;
      if (!(RANK[folder(to)] < RANK[folder(from)])) against.push(`${from} → ${to}`);
    }
  }
  expect(against).toEqual([]);
});

test('no import cycle', () => {
  const graph = importGraph();
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (module: string, path: string[]): void => {
    if (state.get(module) === 'done') return;
    if (state.get(module) === 'open') {
      cycles.push([...path.slice(path.indexOf(module)), module].join(' → '));
      return;
    }
    state.set(module, 'open');
    for (const next of graph.get(module) ?? []) visit(next, [...path, module]);
    state.set(module, 'done');
  };
  for (const module of graph.keys()) visit(module, []);
  expect(cycles).toEqual([]);
});

test('every DynamoDB key string is built in domain/keys.ts: no other module writes a `XYZ#` prefix', () => {
  const outside = sources(LAMBDAS)
    .filter((file) => relative(LAMBDAS, file) !== join('domain', 'keys.ts'))
    .flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => [line, i + 1] as const)
        // Code only: a comment may name a key.
        .filter(([line]) => !/^\s*(\/\/|\*|\/\*)/.test(line) && /['"`][A-Z][A-Z_]+#/.test(line))
        .map(([line, n]) => `${relative(LAMBDAS, file)}:${n}: ${line.trim()}`),
    );
  expect(outside).toEqual([]);
});
