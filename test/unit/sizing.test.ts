// docs/sizing.md is computed (bin/sizing.ts) from the bench's committed results and AWS's quotas, never typed by hand.
import { readFileSync } from 'node:fs';
import { buildSizing, RESULTS_PATH, SIZING_PATH } from '../../bin/sizing';
import { PEAKS, size, type BenchResults } from '../../bin/sizing/model';

const results = JSON.parse(readFileSync(RESULTS_PATH, 'utf8')) as BenchResults;

test('docs/sizing.md is what `npm run sizing` makes of benchmarks/results.json', () => {
  expect(readFileSync(SIZING_PATH, 'utf8')).toBe(buildSizing(results));
});

test('the table follows the results: twice the write units an exchange, twice the warm writes past the least; a need past a quota names it', () => {
  const peak = PEAKS[PEAKS.length - 1];
  // The table's own need, without what the stream consumers add (below).
  const tableOnly = { ...results, stream: undefined };
  const base = size(tableOnly, peak);
  const heavier = size({ ...tableOnly, cost: { ...results.cost, exchange_units: { ...results.cost.exchange_units, dynamodb_write_units: 2 * results.cost.exchange_units.dynamodb_write_units } } }, peak);
  expect(heavier.writeUnitsPerSecond - base.writeUnitsPerSecond).toBeCloseTo(base.exchangesPerSecond * results.cost.exchange_units.dynamodb_write_units);
  expect(heavier.warm.write).toBeGreaterThan(base.warm.write);
  // 50,000 visitors reconnecting within a minute pass 500 new sockets a second.
  expect(base.raise.webSocketNewConnectionsPerSecond).toBeGreaterThan(500);
  expect(size(tableOnly, PEAKS[0]).raise).toEqual({});
  // A bot whose shared key allows fewer exchanges than the peak has is not one bot's to take alone.
  expect(size({ ...results, scale: { exchanges_limited_by: 'a shared key', max_sessions_per_s_per_bot: null, max_exchanges_per_s_per_bot: 200 } }, peak).oneBotFits).toBe(false);
});

test('the stream consumers: shards enough for twice the records/s at the bench\'s records/s per shard, made by warm write throughput; a whole vCPU needs fewer', () => {
  const peak = PEAKS[1];
  const stream = { publisher: { records_per_s_per_shard: 10, records_per_s_per_shard_at_1_vcpu: 70 }, dispatcher: { records_per_s_per_shard: 200, records_per_s_per_shard_at_1_vcpu: 900 } };
  const s = size({ ...results, stream }, peak);
  const records = s.exchangesPerSecond * (results.cost.exchange_functions.publisher.stream_records ?? 0);
  expect(records).toBeGreaterThan(0);
  expect(s.consumerRecordsPerSecond.publisher).toBeCloseTo(records);
  expect(s.consumerShards).toEqual({ asDeployed: Math.ceil((2 * records) / 10), atOneVcpu: Math.ceil((2 * records) / 70) });
  expect(s.streamShards).toBe(Math.ceil((2 * records) / 10));
  expect(s.warm.write).toBeGreaterThanOrEqual(s.streamShards * 1000);
  // Twice as fast a publisher: half the shards.
  const faster = size({ ...results, stream: { ...stream, publisher: { records_per_s_per_shard: 20, records_per_s_per_shard_at_1_vcpu: 140 } } }, peak);
  expect(faster.streamShards).toBe(Math.ceil(records / 10));
  // Without a stream block (an older bench), the table's partitions alone.
  expect(size({ ...results, stream: undefined }, peak).consumerShards).toBeUndefined();
});

test("a visit's stream records count too: visits/s times what a conversation's overhead gave each consumer", () => {
  const peak = PEAKS[1];
  const withVisits = { ...results, cost: { ...results.cost, overhead_functions: { publisher: { stream_records: 3 }, webhook_dispatcher: { stream_records: 1 } } } };
  const without = size({ ...results, cost: { ...results.cost, overhead_functions: {} } }, peak);
  const s = size(withVisits, peak);
  expect(s.consumerRecordsPerSecond.publisher - without.consumerRecordsPerSecond.publisher).toBeCloseTo(3 * s.visitsPerSecond);
  expect(s.consumerRecordsPerSecond.dispatcher - without.consumerRecordsPerSecond.dispatcher).toBeCloseTo(s.visitsPerSecond);
});
