// The layout of lambdas/ (docs/architecture.md "Layout"): folders by concern, imports one way, no cycles; and no
// cycle in lib/ either (the stack's helpers take lib/stack-parts.ts, not the stack that imports them).
// entry points (client, bot, realtime, storage) → http | centrifuge → access → flows → policies → entities →
// adapters → aws → shared; a layer may skip down, never import up or sideways (http and centrifuge know nothing
// of each other). Why this order: a flow (a send, an erasure) composes entities under the rules of policies;
// a policy (rate, retention, revocation, idempotency, quota) keeps its own small items, so it stands on the
// entities' keys (entities/keys.ts builds every key); an entity knows its items and their store, and applies
// no rule; adapters (webhook delivery, tokens) talk to the world outside the table and know no entity.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const LAMBDAS = join(__dirname, '..', '..', 'lambdas');
const LIB = join(__dirname, '..', '..', 'lib');
const RANK: Record<string, number> = {
  client: 8,
  bot: 8,
  realtime: 8,
  storage: 8,
  http: 7,
  centrifuge: 7,
  // The per-request scopes (lambdas/access: who is calling, on what, every rule passed), built from the flows'
  // and policies' reads; http/ and centrifuge/ hand them to the handlers.
  access: 6,
  flows: 5,
  policies: 4,
  entities: 3,
  adapters: 2,
  aws: 1,
  shared: 0,
};

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
  const folders = [...new Set([...importGraph().keys()].map(folder))];
  expect(folders.filter((f) => !(f in RANK))).toEqual([]);
  // None of the layers the code stands on may go missing.
  expect(Object.keys(RANK).filter((f) => !folders.includes(f))).toEqual([]);
});

test('imports go one way: entry points → http | centrifuge → access → flows → policies → entities → adapters → aws → shared', () => {
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

test('every DynamoDB key string is built in entities/keys.ts: no other module writes a `XYZ#` prefix', () => {
  const outside = sources(LAMBDAS)
    .filter((file) => relative(LAMBDAS, file) !== join('entities', 'keys.ts'))
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
