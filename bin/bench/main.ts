// `npm run bench`: starts a fresh local stack in this process, runs each phase on it in turn, prints the figures.
// Options (options.ts): --quick, --json, --scale-only, --stream-only, --before <git-ref>, --cold-runs <n>, --out <file> (where the results go;
// a full run's: benchmarks/results.json). The phases, one file each: DynamoDB round trips and consumed capacity
// per endpoint (round-trips.ts), what an exchange of messages costs on AWS
// unit by unit (cost.ts, with meters.ts, cost-model.ts and prices.ts), realtime delivery through the real `centrifuge`
// client (realtime.ts), throughput under load from a second process and resident memory (throughput.ts, load.ts),
// per function its bundle and cold init, with --before those of another commit too (cold-init.ts); then every
// figure against its target (targets.ts). Tables: report.ts. See docs/benchmarks.md.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startToolStack } from '../../lib/local/tool-stack';
import { options, ROOT } from './options';
import { startWebhookReceiver } from './http';
import { roundTrips } from './round-trips';
import { cost } from './cost';
import { scale } from './scale';
import { realtime } from './realtime';
import { LOAD_SECONDS, MemorySampler, stealSampler, throughput } from './throughput';
import { bundlesAndColdInit, checkoutBefore } from './cold-init';
import { checkTargets } from './targets';
import { reportStream, streamTargets, streamThroughput } from './stream';
import { reportColdInit, reportCost, reportRealtime, reportRoundTrips, reportScale, reportSteal, reportTargets, reportThroughput } from './report';

async function main(): Promise<void> {
  // The old code first: a bad ref fails the run before the stack starts.
  const before = options.before ? checkoutBefore(options.before) : undefined;
  // Bot settings cached for the default 30 s, as on a warm Lambda; an erasure starts at once (no request is in
  // flight to wait for). DynamoDB Local's table in its file, as `npm start` keeps it: the timings stay
  // comparable with earlier runs (in memory, the emulator answers faster and the realtime figures move).
  // An AWS call's attempt may wait 5 s, as in the tests: DynamoDB Local answers one call at a time, and the stream
  // phase's full batch puts about 100 at it together, longer than the 2 s meant for AWS on a loaded machine.
  const stack = await startToolStack('bench', { BOT_CACHE_TTL_MS: '30000', ERASE_DELAY_SECONDS: '0', DYNAMODB_IN_MEMORY: 'off', AWS_REQUEST_TIMEOUT_MS: '5000' });
  const { dataDir } = stack;
  const webhookReceiver = await startWebhookReceiver();
  try {
    if (options.scaleOnly) {
      const figures = await scale(stack.apiUrl, webhookReceiver);
      reportScale(figures);
      if (options.json) console.log(JSON.stringify({ scale: figures }));
      return;
    }
    if (options.streamOnly) {
      const figures = await streamThroughput(stack.apiUrl, webhookReceiver.url);
      reportStream(figures);
      if (options.json) console.log(JSON.stringify({ stream: figures, targets: streamTargets(figures) }));
      return;
    }
    const memory = new MemorySampler(dataDir);
    const atRest = memory.sample();
    const steal = stealSampler();
    // Each phase in turn (its table printed as it ends); the first event of each function goes from the round
    // trips to the cold starts.
    const { figures: counted, firstEvents } = await roundTrips(stack.apiUrl, stack.demoBot, webhookReceiver.url);
    reportRoundTrips(counted);
    const costs = await cost(stack.apiUrl, webhookReceiver);
    reportCost(costs);
    const stream = await streamThroughput(stack.apiUrl, webhookReceiver.url);
    reportStream(stream);
    const realtimeMs = await realtime(stack.apiUrl, stack.demoBot.client_key);
    reportRealtime(realtimeMs);
    const load = await throughput(stack.apiUrl, stack.demoBot.client_key, memory, atRest);
    reportThroughput(load, LOAD_SECONDS);
    const cold = await bundlesAndColdInit(readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim(), before, firstEvents);
    reportColdInit(cold, options.coldRuns);
    // Last: its 128 visitors and their chats stay in the table, and load nothing measured after it.
    const scaled = await scale(stack.apiUrl, webhookReceiver);
    reportScale(scaled);
    const results = {
      machine: {
        nproc: availableParallelism(), // as `nproc` counts
        cpu: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
      },
      quick: options.quick,
      ...counted,
      cost: costs,
      stream,
      scale: scaled,
      realtime_ms: realtimeMs,
      ...load,
      ...cold,
      cpu_steal_pct: steal(),
    };
    const targets = { ...checkTargets(results), ...streamTargets(stream) };
    reportTargets(targets);
    reportSteal(results.cpu_steal_pct);
    if (options.json) console.log(JSON.stringify({ ...results, targets }));
    if (options.out) saveResults(options.out, { ...results, targets });
  } finally {
    webhookReceiver.server.close();
    await stack.stop();
    if (before) rmSync(before.dir, { recursive: true, force: true });
  }
}

/**
 * The run's results as JSON, with when and on what code it ran (the commit, and whether the tree had changes
 * beside it). Machine facts only, no path: the file is committed.
 */
function saveResults(file: string, results: object): void {
  const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
  const run = { date: new Date().toISOString(), commit: git('rev-parse', '--short', 'HEAD'), uncommitted_changes: git('status', '--porcelain', '--untracked-files=no') !== '' };
  const path = resolve(ROOT, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify({ run, ...results }, null, 2) + '\n');
  console.error(`results written to ${file}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
