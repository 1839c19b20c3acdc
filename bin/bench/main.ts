// `npm run bench [-- --quick] [-- --json] [-- --before <git-ref>]` (bin/bench/, one file per phase): measures a fresh local stack started in
// this process: DynamoDB round trips and consumed capacity per endpoint (an SDK middleware on the functions'
// shared DynamoDB client), realtime delivery through the real `centrifuge` client, throughput under load from
// a second process (autocannon), resident memory, and per function its bundle and cold init. With
// `--before <git-ref>`, the functions of that commit are bundled and cold-started too, in the same run, for a
// before/after table. See docs/benchmarks.md.
import { readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { startToolStack } from '../../lib/local/tool-stack';
import { options, out } from './options';
import { startWebhookReceiver } from './http';
import { roundTrips } from './round-trips';
import { realtime } from './realtime';
import { MemorySampler, stealSampler, throughput } from './throughput';
import { bundlesAndColdInit, checkoutBefore } from './cold-init';
import { checkTargets } from './targets';

async function main(): Promise<void> {
  // The old code first: a bad ref fails the run before the stack starts.
  const before = options.before ? checkoutBefore(options.before) : undefined;
  // Bot settings cached for the default 30 s, as on a warm Lambda.
  const stack = await startToolStack('bench', { BOT_CACHE_TTL_MS: '30000' });
  const { dataDir } = stack;
  const webhookReceiver = await startWebhookReceiver();
  try {
    const memory = new MemorySampler(dataDir);
    const atRest = memory.sample();
    const steal = stealSampler();
    const { results: counted, firstEvents } = await roundTrips(stack.apiUrl, stack.demoBot, webhookReceiver.url);
    const results = {
      machine: {
        nproc: availableParallelism(), // as `nproc` counts
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
      },
      quick: options.quick,
      ...counted,
      realtime_ms: await realtime(stack.apiUrl, stack.demoBot.client_key),
      ...(await throughput(stack.apiUrl, stack.demoBot.client_key, memory, atRest)),
      ...(await bundlesAndColdInit(readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim(), before, firstEvents)),
      cpu_steal_pct: steal(),
    };
    const targets = checkTargets(results);
    if (results.cpu_steal_pct !== undefined) out(`\nCPU stolen by the host over the whole run: ${results.cpu_steal_pct}%`);
    if (options.json) console.log(JSON.stringify({ ...results, targets }));
  } finally {
    webhookReceiver.server.close();
    await stack.stop();
    if (before) rmSync(before.dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
