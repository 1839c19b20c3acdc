// `npm run bench -- --quick --json` keeps working and its round-trip targets hold (counts, not times:
// timings are reported by the benchmark, never asserted in a test).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/local-process';

test('the quick benchmark prints one JSON object with every figure; round trips meet their targets', () => {
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(ROOT, 'bin', 'bench.ts'), '--quick', '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(run.status).toBe(0);
  const result = JSON.parse(run.stdout.trim().split('\n').pop() as string);
  for (const key of ['round_trips', 'capacity_units', 'overhead_ratio', 'realtime_ms', 'bundle_kb', 'cold_init_ms', 'rps', 'rss_mb']) expect(result).toHaveProperty(key);
  expect(result.realtime_ms).toEqual({
    median: expect.any(Number),
    p99: expect.any(Number),
    fanout50_median: expect.any(Number),
    fanout50_p99: expect.any(Number),
    fanout50_each_median: expect.any(Number),
    messages: 50,
    cpu_steal_pct: expect.any(Number),
  });
  expect(result.cpu_steal_pct).toEqual(expect.any(Number));
  const rt = result.round_trips;
  for (const single of ['list_chats', 'create_chat', 'list_messages', 'create_message', 'mark_read']) expect({ [single]: rt[single] }).toEqual({ [single]: 1 });
  expect(rt.create_session_returning).toBeLessThanOrEqual(2);
  expect(rt.create_session_new).toBeLessThanOrEqual(3);
  expect(rt.publisher_per_message).toBe(1);
  // Bot settings cached: the dispatcher makes no DynamoDB call for them.
  expect(rt.webhook_dispatcher_per_message).toBe(0);
  // Every function is bundled and cold-started (with the event it got from the stack).
  expect(Object.keys(result.bundle_kb).length).toBeGreaterThanOrEqual(19);
  expect(Object.keys(result.cold_init_ms).sort()).toEqual(Object.keys(result.bundle_kb).sort());
  // The load is part of the cold init.
  for (const id of Object.keys(result.cold_init_ms)) expect({ [id]: result.cold_load_ms[id] }).toEqual({ [id]: expect.any(Number) });
  for (const [id, ms] of Object.entries(result.cold_init_ms)) expect(result.cold_load_ms[id]).toBeLessThanOrEqual(ms as number);
  expect(result.rps).toEqual({ list_chats: expect.any(Number), create_message: expect.any(Number) });
  expect(result.rss_mb.at_rest.total).toBeGreaterThan(0);
  expect(result.rss_mb.under_load.total).toBeGreaterThan(0);
}, 260_000);
