// Starts one local stack for the whole test run (in a temporary data folder, on free ports, bot cache off).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, stackEnv, startLocalProcess } from './local-process';
import { applyLocalEnv, localSettings } from '../../lib/local/settings';
import { startSynth } from './shapes';

export default async function globalSetup(): Promise<void> {
  // The CDK suites' one synth runs beside the stack's start (test/support/shapes.ts).
  const synth = startSynth();
  process.env.SHAPES_DIR = synth.dir;
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-test-'));
  // Bot cache off: tests switch bots off and expect the next request to see it. Webhook retries are short
  // (two retries, a second apart) so the retry and dead-letter paths run in seconds.
  // Rate limits stay on but high: every test comes from 127.0.0.1 (test/e2e/limits.test.ts runs its own
  // stack with low ones).
  const env = await stackEnv(dataDir, {
    BOT_CACHE_TTL_MS: '0',
    WEBHOOK_RETRY_DELAYS: '1,1',
    WEBHOOK_TIMEOUT_MS: '1500',
    RATE_MESSAGES_PER_MINUTE: '1000',
    RATE_CHATS_PER_MINUTE: '1000',
    RATE_READS_PER_MINUTE: '100000',
    RATE_UPLOADS_PER_MINUTE: '1000',
    RATE_SESSIONS_PER_IP_PER_MINUTE: '100000',
    // DynamoDB Local on two cores, with every suite running at once, can take over 2 s (the default, sized for
    // AWS) to answer under a burst; a request timing out there is the emulator's load, not what a test checks
    // (test/e2e/faults.test.ts sets its own short timeout).
    AWS_REQUEST_TIMEOUT_MS: '5000',
    // Erasures start 3 s after the DELETE (15 s on AWS: requests in flight finish first); erase.test.ts asks
    // what holds while one runs within them.
    ERASE_DELAY_SECONDS: '3',
    // Expired items (TTL) swept every 2 s, not every minute: a test of an expiry sees it within seconds.
    LOCAL_TTL_SWEEP_MS: '2000',
    // A day of a bot's retention_days lasts a second: a test of retention sees messages expire within seconds.
    RETENTION_DAY_SECONDS: '1',
  });
  // Its output goes to test-output/local-stack.log for anyone debugging a failure.
  const logFile = join(ROOT, 'test-output', 'local-stack.log');
  const stack = await startLocalProcess(env, logFile);
  // LOCAL_STACK_LOG: a failing test prints the lines logged while it ran (test/support/stack-log-environment.ts).
  Object.assign(process.env, env, { TEST_API_URL: stack.apiUrl, LOCAL_STACK_LOG: logFile });
  // Test workers inherit this environment, so they can use the lambdas/ modules against the same emulators.
  applyLocalEnv(localSettings());
  (globalThis as Record<string, unknown>).__LOCAL_STACK__ = { stack, dataDir, synth };
}
