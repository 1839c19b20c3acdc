// docs/cost.md quotes the committed full run (benchmarks/results.json, `cost`): its table and its totals are that
// run's figures, so that a new run whose figures are not carried into the page fails here instead of drifting.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CostFigures } from '../../bin/bench/cost';
import type { UnitKey } from '../../bin/bench/cost-model';

const ROOT = join(__dirname, '..', '..');
const doc = readFileSync(join(ROOT, 'docs', 'cost.md'), 'utf8');
const cost = (JSON.parse(readFileSync(join(ROOT, 'benchmarks', 'results.json'), 'utf8')) as { cost: CostFigures }).cost;

/** The table's rows: unit → its cells (per exchange, USD per 1M exchanges, per conversation). */
const ROWS: Record<string, UnitKey> = {
  'HTTP API requests': 'http_requests',
  'Lambda invocations': 'lambda_invocations',
  'Lambda GB-seconds': 'lambda_gb_seconds',
  'DynamoDB write units': 'dynamodb_write_units',
  'DynamoDB read units': 'dynamodb_read_units',
  'WebSocket messages': 'websocket_messages',
  'SQS requests': 'sqs_requests',
  'Log bytes': 'log_bytes',
  'Secrets Manager calls': 'secrets_manager_calls',
};

/** A cell's leading number ("2,039", "10 (4 requests, …)"). */
const numberIn = (cell: string) => Number(/^[\d,.]+/.exec(cell.trim())?.[0].replace(/,/g, '') ?? NaN);
/** Whether `shown` is `value` to the precision the page shows it with (its decimals). */
const asShown = (shown: string, value: number) => {
  const decimals = /\.(\d+)/.exec(shown.trim().split(' ')[0])?.[1].length ?? 0;
  return Math.abs(numberIn(shown) - value) <= 0.5 * 10 ** -decimals + 1e-9;
};

test("the table is the committed run's: each unit per exchange, its USD per million, and per conversation", () => {
  const wrong: string[] = [];
  for (const [label, key] of Object.entries(ROWS)) {
    const row = doc.split('\n').find((l) => l.startsWith(`| ${label} |`));
    if (!row) {
      wrong.push(`${label}: no row`);
      continue;
    }
    const [perExchange, usd, perConversation] = row.split('|').slice(2, 5);
    if (!asShown(perExchange, cost.exchange_units[key])) wrong.push(`${label} per exchange: ${perExchange.trim()} (run: ${cost.exchange_units[key]})`);
    if (!asShown(usd, cost.usd_per_1m_exchanges_by_unit[key])) wrong.push(`${label} USD: ${usd.trim()} (run: ${cost.usd_per_1m_exchanges_by_unit[key]})`);
    if (!asShown(perConversation, cost.overhead_units[key])) wrong.push(`${label} per conversation: ${perConversation.trim()} (run: ${cost.overhead_units[key]})`);
  }
  expect(wrong).toEqual([]);
});

test("the totals quoted are the committed run's", () => {
  const usd = (n: number) => n.toFixed(2);
  expect(doc).toContain(`| **Total** | | **${usd(cost.usd_per_1m_exchanges)}** | **$${usd(cost.usd_per_1m_conversations_overhead)} per million conversations** |`);
  expect(doc).toContain(`**Per exchange: $${usd(cost.usd_per_1m_exchanges)} per million** ($${usd(cost.recoverable.usd_per_1m_exchanges)} on a recoverable subscription)`);
  expect(doc).toContain(`**$${usd(cost.recoverable.usd_per_1m_exchanges)} per million exchanges** and $${usd(cost.recoverable.usd_per_1m_conversations_overhead)} per`);
  expect(doc).toContain(`$${usd(cost.cpu_share_bound.usd_per_1m_exchanges)} per million exchanges, on the functions' share of a vCPU`);
  expect(doc).toContain(`The last full run: $${usd(cost.usd_per_1m_exchanges_consumers_at_1_vcpu)} per million`);
});
