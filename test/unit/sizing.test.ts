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
  const base = size(results, peak);
  const heavier = size({ ...results, cost: { ...results.cost, exchange_units: { ...results.cost.exchange_units, dynamodb_write_units: 2 * results.cost.exchange_units.dynamodb_write_units } } }, peak);
  expect(heavier.writeUnitsPerSecond - base.writeUnitsPerSecond).toBeCloseTo(base.exchangesPerSecond * results.cost.exchange_units.dynamodb_write_units);
  expect(heavier.warm.write).toBeGreaterThan(base.warm.write);
  // 50,000 visitors reconnecting within a minute pass 500 new sockets a second.
  expect(base.raise.webSocketNewConnectionsPerSecond).toBeGreaterThan(500);
  expect(size(results, PEAKS[0]).raise).toEqual({});
  // A bot whose shared key allows fewer exchanges than the peak has is not one bot's to take alone.
  expect(size({ ...results, scale: { exchanges_limited_by: 'a shared key', max_sessions_per_s_per_bot: null, max_exchanges_per_s_per_bot: 200 } }, peak).oneBotFits).toBe(false);
});
