// The stack shapes the CDK suites check (defaults, realtime off, alarms both ways, every setting, a pinned
// region, two stages from context), synthesized ONCE per test run by one child process
// (test/support/synth-shapes.ts, started by the global set-up) and read as JSON by cfn-lint, the logical-ID
// and access-log tests and the IAM tier. Loading aws-cdk-lib under jest costs seconds per file; this module
// never loads it.
import { spawnSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatStackProps } from '../../lib/stack';

/** Stack id → props. Stage stacks come from context instead (STAGE_CONTEXT), as bin/app.ts makes them. */
export const SHAPES: Record<string, ChatStackProps> = {
  Defaults: {},
  RealtimeOff: { realtime: false },
  AlarmEmailEveryOption: { tracing: true, removalPolicy: 'destroy', alarmEmail: 'ops@shop.example', wsAccessLogs: true, architecture: 'x86_64' },
  AlarmTopicRealtimeOff: { realtime: false, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', env: { region: 'eu-west-1' } },
  EverySetting: {
    stage: 'staging',
    corsOrigins: ['https://shop.example', 'http://localhost:8080'],
    logRetentionDays: 7,
    removalPolicy: 'destroy',
    memorySize: 1024,
    architecture: 'x86_64',
    wsAccessLogs: true,
    botCacheTtlMs: 0,
    throttle: { rateLimit: 10, burstLimit: 20 },
    limits: { RATE_MESSAGES_PER_MINUTE: 30, MAX_CHATS_PER_USER: 5 },
  },
  InfiniteLogs: { logRetentionDays: 9999 },
};

/** Two stages side by side, from context as `cdk deploy -c stage=staging,prod` gives it. */
export const STAGE_CONTEXT = { stage: 'staging,prod', removalPolicy: 'destroy' };

/** What the synth writes beside the templates: stack name → template file. */
const READY = 'ready.json';
const FAILED = 'failed.txt';
const ROOT = join(__dirname, '..', '..');
const synthArgs = (dir: string, ...more: string[]) => [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(__dirname, 'synth-shapes.ts'), dir, ...more];

/** Starts the one synth of the run in the background (global set-up); SHAPES_DIR tells the test files where. */
export function startSynth(): { dir: string; child: ChildProcess } {
  const dir = mkdtempSync(join(tmpdir(), 'chat-shapes-'));
  const child = spawn(process.execPath, synthArgs(dir), { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  child.on('exit', (code) => {
    if (code !== 0 && !existsSync(join(dir, READY))) writeFileSync(join(dir, FAILED), `synth exited ${code}: ${stderr}`);
  });
  return { dir, child };
}

export type Template = { Resources: Record<string, any>; [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Stack name → template file, once the run's synth is done (synthesized here when run outside the global set-up). */
export async function templateFiles(): Promise<Record<string, string>> {
  let dir = process.env.SHAPES_DIR;
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'chat-shapes-'));
    const run = spawnSync(process.execPath, synthArgs(dir), { cwd: ROOT, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`synth failed: ${run.stderr}`);
    process.env.SHAPES_DIR = dir;
  }
  for (const deadline = Date.now() + 120_000; !existsSync(join(dir, READY)); ) {
    if (existsSync(join(dir, FAILED))) throw new Error(readFileSync(join(dir, FAILED), 'utf8'));
    if (Date.now() > deadline) throw new Error(`the stack shapes were not synthesized in 120 s (${dir})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return JSON.parse(readFileSync(join(dir, READY), 'utf8')) as Record<string, string>;
}

/** One synthesized stack's template. */
export async function template(stack: keyof typeof SHAPES): Promise<Template> {
  return JSON.parse(readFileSync((await templateFiles())[stack], 'utf8')) as Template;
}

/** A real synth with every function bundled into `outdir`, in a child process: esbuild's lines stay there. */
export function synthBundled(outdir: string): void {
  const run = spawnSync(process.execPath, synthArgs(outdir, '--bundled'), { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`bundled synth failed (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
}
