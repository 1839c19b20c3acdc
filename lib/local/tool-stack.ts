// A fresh local stack started in this process for a tool that measures it (`npm run bench`, `npm run fuzz`):
// a temporary data folder, free ports, no echo bot, the abuse limits off (the tools measure the service, not
// its limits), and the functions' JSON log lines dropped so the tool's own output stays readable. Started
// after the environment is set: the stack's modules read their configuration on import.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackPortsEnv } from './ports';
import type { DemoBot } from './stack';

export interface ToolStack {
  apiUrl: string;
  demoBot: DemoBot;
  dataDir: string;
  /** Stops the stack and removes its data folder. */
  stop(): Promise<void>;
}

/** The functions' log lines written so far (the benchmark's cost phase counts what CloudWatch would ingest). */
export const functionLogs = { lines: 0, bytes: 0 };

export async function startToolStack(name: string, env: { BOT_CACHE_TTL_MS: string } & Record<string, string>): Promise<ToolStack> {
  const dataDir = mkdtempSync(join(tmpdir(), `chat-${name}-`));
  Object.assign(process.env, {
    DATA_DIR: dataDir,
    ...(await stackPortsEnv()),
    ECHO_BOT: 'off',
    RATE_MESSAGES_PER_MINUTE: '0',
    RATE_CHATS_PER_MINUTE: '0',
    RATE_READS_PER_MINUTE: '0',
    RATE_UPLOADS_PER_MINUTE: '0',
    RATE_SESSIONS_PER_IP_PER_MINUTE: '0',
    MAX_CHATS_PER_USER: '0',
    // The benchmark's fan-out is 50 sockets of one user.
    MAX_SOCKETS_PER_USER: '0',
    RATE_SOCKET_COMMANDS_PER_MINUTE: '0',
    MAX_OPEN_UPLOAD_BYTES: '0',
    MAX_UPLOAD_BYTES_PER_DAY: '0',
    // Its data folder is removed at the stop: the table may as well be in memory (a third less of DynamoDB
    // Local's CPU), unless the tool says otherwise.
    DYNAMODB_IN_MEMORY: 'on',
    ...env,
  });
  const { localSettings } = await import('./settings');
  const { startLocalStack } = await import('./stack');
  // startLocalStack also points this process's environment (applyLocalEnv) at its DynamoDB Local and key file.
  const stack = await startLocalStack(localSettings(), () => undefined);
  // The functions log one JSON line per request (as on Lambda, so that cost is measured); the lines are dropped.
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const text = String(chunk);
      if (!text.startsWith('{"level"')) return write(chunk, ...rest);
      functionLogs.lines += text.split('\n').filter(Boolean).length;
      functionLogs.bytes += Buffer.byteLength(text);
      return true;
    });
  }
  return {
    apiUrl: stack.apiUrl,
    demoBot: stack.demoBot,
    dataDir,
    stop: async () => {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
