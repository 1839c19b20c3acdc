// docs/sizing.md: what a stage needs for 1,000 to 50,000 visitors and 100 to 10,000 messages a second, computed
// (bin/sizing/model.ts) from the bench's committed results and AWS's published quotas (lib/aws-quotas.ts), never
// typed by hand. `npm run sizing` writes it; `--check` fails when it is stale (test/unit/sizing.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AWS_QUOTAS, AWS_QUOTAS_AS_OF } from '../lib/aws-quotas';
import { DEFAULT_THROTTLE } from '../lib/stack-config';
import { CONSUMERS, HEADROOM, PEAKS, RECONNECT_SECONDS, size, type BenchResults, type Sizing } from './sizing/model';

const ROOT = join(__dirname, '..');
export const RESULTS_PATH = join(ROOT, 'benchmarks', 'results.json');
export const SIZING_PATH = join(ROOT, 'docs', 'sizing.md');

const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function buildSizing(results: BenchResults): string {
  const rows = PEAKS.map((p) => size(results, p));
  const head = `| | ${rows.map((s) => `${n(s.peak.visitors)} visitors, ${n(s.peak.messagesPerSecond)} messages/s`).join(' | ')} |`;
  const line = (label: string, cell: (s: Sizing) => string) => `| ${label} | ${rows.map(cell).join(' | ')} |`;
  const raise = (s: Sizing) =>
    Object.entries(s.raise)
      .map(([k, v]) => `${k} → ${n(v)}`)
      .join('<br>') || 'none';
  const quotas = Object.entries(AWS_QUOTAS).map(([k, q]) => `| \`${k}\` | ${n(q.value)} | ${q.adjustable ? 'yes' : 'no'} | ${q.what} | ${q.source} |`);
  const { scale } = results;
  return `# Sizing

What a stage needs for a peak: the settings to deploy it with, the quotas to ask AWS to raise first, and what
the hour costs. Made by \`npm run sizing\` from the bench's committed results (\`benchmarks/results.json\`,
run ${results.run.date.slice(0, 10)} on ${results.run.commit}: [benchmarks.md](benchmarks.md)) and AWS's published quotas
(\`lib/aws-quotas.ts\`, below); a test checks this page is what the script makes.

## The table

A peak is concurrent visitors and messages a second, users' and bots' together. Every setting is ${n(HEADROOM)} times
the need, rounded up; sessions and new sockets are sized for every visitor reconnecting within ${RECONNECT_SECONDS} s.

${head}
|---|${rows.map(() => '---').join('|')}|
${line('exchanges/s (a message, its reply, a read mark)', (s) => n(s.exchangesPerSecond))}
${line('visits/s (session, socket)', (s) => n(s.visitsPerSecond, 1))}
${line('HTTP API requests/s', (s) => n(s.httpRequestsPerSecond))}
${line('WebSocket requests/s ($connect, frames)', (s) => n(s.wsRequestsPerSecond))}
${line('@connections posts/s', (s) => n(s.callbacksPerSecond))}
${line('stage throttle, both APIs (`throttleRate` / `throttleBurst`)', (s) => `${n(s.stageThrottle.rateLimit)} / ${n(s.stageThrottle.burstLimit)}`)}
${line('route throttles (`routeThrottles`, rate; burst twice)', (s) =>
  Object.entries(s.routeThrottles)
    .map(([k, v]) => `\`${k}\` ${n(v)}`)
    .join('<br>'),
)}
${line('Lambda concurrency', (s) => n(s.lambdaConcurrency))}
${line('DynamoDB write / read units/s', (s) => `${n(s.writeUnitsPerSecond)} / ${n(s.readUnitsPerSecond)}`)}
${line('warm throughput (`warmWriteUnits` / `warmReadUnits`)', (s) => `${n(s.warm.write)} / ${n(s.warm.read)}`)}
${line('stream records/s to the publisher / the dispatcher', (s) => `${n(s.consumerRecordsPerSecond.publisher)} / ${n(s.consumerRecordsPerSecond.dispatcher)}`)}
${line('shards the consumers need (at 256 MB / at 1,769 MB)', (s) => (s.consumerShards ? `${n(s.consumerShards.asDeployed)} / ${n(s.consumerShards.atOneVcpu)}` : 'not measured'))}
${line('stream shards (at least)', (s) => n(s.streamShards))}
${line('stream records/s per shard (at most)', (s) => n(s.recordsPerShardPerSecond))}
${line('quotas to raise (to)', raise)}
${line('one bot alone at this peak', (s) => (s.oneBotFits === undefined ? 'not measured' : s.oneBotFits ? 'yes' : 'no: a shared key limits it'))}
${line('cost per hour, USD (list prices)', (s) => n(s.usdPerHour, 2))}

## How each figure is made

- **Exchanges and visits.** An exchange is the bench's: a user's message, the bot's reply, and the user's read
  mark, so messages/s ÷ 2. A visit lasts the bench's conversation (${n(results.cost.overhead_units.websocket_connection_minutes)} minutes of socket), so visits/s is
  visitors ÷ its seconds; each visit is a session, a chat list, a new chat, its history and a socket.
- **Requests.** Per exchange and per visit, as the bench's cost block counts them (${n(results.cost.exchange_units.http_requests)} HTTP requests an exchange,
  ${n(results.cost.overhead_units.http_requests)} a visit with its CORS preflights). WebSocket requests: each visit's \`$connect\` and its frames (the
  cost block bills each frame in and out). Each publication is one post to the \`@connections\` API, which counts
  toward API Gateway's account rate.
- **Throttles.** One stage throttle is set on both APIs' stages, twice the larger API's requests/s (never below
  the default ${DEFAULT_THROTTLE.rateLimit}). Route throttles cap the session and \`$connect\` at every visitor reconnecting within
  ${RECONNECT_SECONDS} s (or twice the visits/s, if more), and the client's send at twice its need, so a flood of one cannot
  take the others' rate. The new-connections quota is checked against that wave.
- **Lambda concurrency.** The exchange's billed seconds (each function's measured time and the AWS latency
  allowances: [cost.md](cost.md)) times exchanges/s, and the visit's GB-seconds at the smallest memory (256 MB,
  so it errs high) times visits/s; the stream consumers by their records: records/s ÷ what one shard takes is
  how many of their invocations are busy at once. Each function also scales by at most ${n(AWS_QUOTAS.lambdaScalingPer10Seconds.value)} executions every 10 s.
- **DynamoDB.** Write and read units per exchange and per visit, as AWS bills them (the cost block). Warm
  throughput pre-splits the table for twice the peak (at least the table's own ${n(AWS_QUOTAS.dynamoWarmWriteUnitsPerSecond.value)} / ${n(AWS_QUOTAS.dynamoWarmReadUnitsPerSecond.value)}). One
  partition takes ${n(AWS_QUOTAS.dynamoPartitionWriteUnitsPerSecond.value)} writes and ${n(AWS_QUOTAS.dynamoPartitionReadUnitsPerSecond.value)} reads a second, so the table has at least the shards shown, and
  each stream shard follows one partition.
- **Stream consumers.** The publisher takes batches of ${CONSUMERS.publisherBatch} records and the webhook dispatcher of ${CONSUMERS.dispatcherBatch}, with a
  parallelization factor of ${CONSUMERS.parallelization} per shard (\`lib/consumers.ts\`), so a shard's records go through one batch at a time. The
  records each is given are the exchange's times exchanges/s plus a visit's times visits/s, as the cost block counts
  them (\`exchange_functions\`, \`overhead_functions\`: what passes each consumer's filters). A shard keeps up to
  the bench's records/s per shard${
    results.stream
      ? ` (publisher ${n(results.stream.publisher.records_per_s_per_shard)}, dispatcher ${n(results.stream.dispatcher.records_per_s_per_shard)} at 256 MB; ${n(results.stream.publisher.records_per_s_per_shard_at_1_vcpu)} and ${n(results.stream.dispatcher.records_per_s_per_shard_at_1_vcpu)} at a whole vCPU)`
      : ' (not in these results)'
  }: their CPU per record, on one thread, bounds it ([benchmarks.md](benchmarks.md#stream-consumers)). The stage
  needs twice the records/s in shards, so warm write throughput is raised to make that many partitions
  (1,000 write units each) when the table's own need makes fewer. The second figure is the shards with both
  consumers at 1,769 MB (\`streamConsumerMemorySize\`, [deploy.md](deploy.md)): fewer partitions, a dearer
  GB-second. The warm throughput and the quotas shown are for the consumers at 256 MB.
- **One bot.** The bench's scale block gives what one bot can take before a key its conversations share reaches
  its limit${
    scale
      ? `: ${scale.max_exchanges_per_s_per_bot === null ? 'no limit on exchanges' : `${n(scale.max_exchanges_per_s_per_bot)} exchanges/s (${scale.exchanges_limited_by})`} and ${scale.max_sessions_per_s_per_bot === null ? 'none on sessions (no key a session writes or reads is shared)' : `${n(scale.max_sessions_per_s_per_bot)} sessions/s`}`
      : ' (not in these results: a bench run before the scale phase)'
  }. "yes": the whole peak could be one bot's.
- **Cost per hour.** Exchanges/s × the cost block's USD per exchange, plus visits/s × its USD per visit, × 3,600,
  at the list prices of \`bin/bench/prices.ts\` ([cost.md](cost.md)); without storage, data transfer, alarms, or
  the one-time charge for raising warm throughput.

## AWS quotas used (as of ${AWS_QUOTAS_AS_OF})

Per account and Region unless said otherwise; check each source before relying on a figure. Raise one in the
Service Quotas console before the peak: a raise takes days.

| Quota | Default | Adjustable | What | Source |
|---|---|---|---|---|
${quotas.join('\n')}
`;
}

if (require.main === module) {
  const results = JSON.parse(readFileSync(RESULTS_PATH, 'utf8')) as BenchResults;
  const doc = buildSizing(results);
  if (process.argv.includes('--check')) {
    if (readFileSync(SIZING_PATH, 'utf8') !== doc) {
      console.error('docs/sizing.md is stale: run npm run sizing');
      process.exit(1);
    }
  } else {
    writeFileSync(SIZING_PATH, doc);
  }
}
