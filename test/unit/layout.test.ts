// The layout of lambdas/ (docs/architecture.md "Layout"): folders by concern, imports one way, no cycles; and no
// cycle in lib/ either (the stack's helpers take lib/stack-parts.ts, not the stack that imports them).
// entry points (client, bot, realtime) → http | centrifuge → access → domain → aws → shared; a layer may skip down,
// never import up or sideways (http and centrifuge know nothing of each other).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LAMBDAS = join(__dirname, '..', '..', 'lambdas');
const LIB = join(__dirname, '..', '..', 'lib');
// access/ builds every request's scope from the domain's reads; http/ and centrifuge/ hand it to the handlers.
const RANK: Record<string, number> = { client: 4, bot: 4, realtime: 4, storage: 4, http: 3, centrifuge: 3, access: 2.5, domain: 2, aws: 1, shared: 0 };

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every module under `root` (path relative to it, no extension) and the modules it imports (type imports too). */
function importGraph(root = LAMBDAS): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(root)) {
    const from = relative(root, file).replace(/\.ts$/, '');
    const specs = [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
    graph.set(
      from,
      specs.map((s) => relative(root, resolve(dirname(file), s))),
    );
  }
  return graph;
}

/** Each import cycle of the graph, as `a → b → a`. */
function cyclesOf(graph: Map<string, string[]>): string[] {
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
  return cycles;
}

const folder = (module: string): string => module.split('/')[0];

test('every folder of lambdas/ has a place in the layering', () => {
  expect([...new Set([...importGraph().keys()].map(folder))].sort()).toEqual(Object.keys(RANK).sort());
});

test('imports go one way: entry points → http | centrifuge → access → domain → aws → shared', () => {
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
  expect(cyclesOf(importGraph())).toEqual([]);
});

test('no import cycle in lib/ (the stack, its helpers, the local stack)', () => {
  expect(cyclesOf(importGraph(LIB))).toEqual([]);
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
