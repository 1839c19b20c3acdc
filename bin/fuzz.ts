// `npm run fuzz -- [--requests 2000] [--seed N] [--concurrency 4] [--url <base url of a running stack>] [--log <file>]`: property-based,
// contract-driven fuzzing of every route of docs/openapi.yaml (test/fuzz/). Without --url it starts a fresh local stack
// in this process (a temporary data folder, rate limits off) and removes it at the end. Exit code 1 on any failure.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { startToolStack } from '../lib/local/tool-stack';

const USAGE = 'usage: npm run fuzz -- [--requests 2000] [--seed N] [--concurrency 4] [--url http://localhost:3000] [--log exchanges.jsonl]';

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > 2 ** 32 - 1) throw new Error(`--${name} must be an integer from ${min} to ${2 ** 32 - 1}, got "${raw}"\n${USAGE}`);
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string' },
      seed: { type: 'string' },
      concurrency: { type: 'string' },
      url: { type: 'string' },
      log: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const requests = positiveInt('requests', values.requests, 2000);
  const concurrency = positiveInt('concurrency', values.concurrency, 4);
  const seed = positiveInt('seed', values.seed, randomBytes(4).readUInt32BE(), 0);
  // First, so that whatever happens next the run can be replayed.
  console.log(`fuzz: seed ${seed}, ${requests} requests, concurrency ${concurrency}`);

  let stop: (() => Promise<void>) | undefined;
  let baseUrl = values.url?.replace(/\/+$/, '');
  if (!baseUrl) {
    // Bots made or switched off in this process are seen at once by the handlers.
    const stack = await startToolStack('fuzz', { BOT_CACHE_TTL_MS: '0' });
    baseUrl = stack.apiUrl;
    stop = () => stack.stop();
  } else if (!process.env.DYNAMODB_ENDPOINT) {
    // A stack run elsewhere (`npm start` with the same DATA_DIR and ports): bots are made in its DynamoDB Local.
    const { applyLocalEnv, localSettings } = await import('../lib/local/settings');
    applyLocalEnv(localSettings());
  }

  try {
    const { runFuzz } = await import('../test/fuzz/runner');
    const { formatReport } = await import('../test/fuzz/report');
    const report = await runFuzz({ baseUrl, requests, seed, concurrency, logFile: values.log });
    console.log(formatReport(report));
    return report.failureCount > 0 ? 1 : 0;
  } finally {
    await stop?.();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
