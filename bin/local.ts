// `npm start`: runs the whole service on this machine, no AWS account needed.
import { startLocalStack } from '../lib/local/stack';
import { LocalStackError } from '../lib/local/process';
import { localSettings } from '../lib/local/settings';

async function main(): Promise<void> {
  const settings = localSettings();
  const log = (line: string) => console.log(`[local] ${line}`);
  const stack = await startLocalStack(settings, log);
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    await stack.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  // Whatever started us (tsx, a test) is gone, killed outright: stop as on SIGTERM, not run on as an orphan
  // (the S3 emulator does the same with us).
  const parent = process.ppid;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      void shutdown('parent gone');
    }
  }, 1000).unref();
  log(`data folder: ${settings.dataDir}`);
  log(`demo bot: ${stack.demoBot.bot_id} (keys in ${settings.dataDir}/demo-bot.json)`);
  log(`client key: ${stack.demoBot.client_key}`);
  log(`Client API: ${stack.apiUrl}/api/client · Bot API: ${stack.apiUrl}/api/bot`);
  log(`chat page: ${stack.apiUrl}/ (try it in a browser)`);
  log(`ready on ${stack.apiUrl}`);
}

main().catch((err) => {
  if (err instanceof LocalStackError) console.error(`[local] ${err.message}`);
  else console.error('[local] failed to start:', err);
  process.exit(1);
});
