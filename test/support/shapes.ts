// The stack shapes the CDK suites check (defaults, realtime and web hosting off, alarms both ways, every setting, a pinned
// region, two stages from context), synthesized ONCE per test run by one child process
// (test/support/synth-shapes.ts, started by the global set-up) and read as JSON by the stack tests, cfn-lint,
// the logical-ID and access-log tests and the IAM tier; beside each template, what the template cannot say
// (the constructs' logical IDs, cdk-nag's report). Loading aws-cdk-lib under jest costs seconds per file; this
// module never loads it.
import { spawnSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { ChatStackProps } from '../../lib/stack';
import type { QueueName } from '../../lib/routes';

/** Stack id → props. Stage stacks come from context instead (STAGE_CONTEXT), as bin/app.ts makes them. */
export const SHAPES: Record<string, ChatStackProps> = {
  Defaults: {},
  RealtimeOff: { realtime: false, webHosting: false },
  AlarmEmailEveryOption: { tracing: true, removalPolicy: 'destroy', alarmEmail: 'ops@shop.example', wsAccessLogs: true, architecture: 'x86_64' },
  AlarmTopicRealtimeOff: { realtime: false, alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops', env: { region: 'eu-west-1' } },
  EverySetting: {
    stage: 'staging',
    corsOrigins: ['https://shop.example', 'http://localhost:8080'],
    logRetentionDays: 7,
    removalPolicy: 'destroy',
    memorySize: 1024,
    streamConsumerMemorySize: 1769,
    architecture: 'x86_64',
    wsAccessLogs: true,
    botCacheTtlMs: 0,
    chatListShards: 64,
    throttle: { rateLimit: 10, burstLimit: 20 },
    routeThrottles: { 'POST /api/client/session': { rateLimit: 5, burstLimit: 8 }, $connect: { rateLimit: 3, burstLimit: 6 } },
    warmThroughput: { readUnitsPerSecond: 15000, writeUnitsPerSecond: 6000 },
    limits: { RATE_MESSAGES_PER_MINUTE: 30, MAX_CHATS_PER_USER: 5, MAX_UPLOAD_BYTES: 1024 ** 3 },
    streamBatchSize: 500,
    streamBatchingWindowSeconds: 2,
    webhookConcurrency: 20,
    webhookSlowConcurrency: 3,
  },
  InfiniteLogs: { logRetentionDays: 9999 },
};

/** Props the stack must refuse (it checks its own, as the context's keys are checked): the synth tries each. */
export const REFUSED_PROPS: Record<string, ChatStackProps> = {
  memorySize: { memorySize: 64 },
  corsOrigins: { corsOrigins: ['shop.example'] },
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

/** A synthesized template as far as tests read it: its resources (each read by its type's properties). */
export interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  Outputs?: Record<string, unknown>;
}

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

/** The logical ID of each construct a test looks up, as `stack.getLogicalId` gives it. */
export interface StackIds {
  /** Function id (lib/routes.ts, lib/consumers.ts) → its function's; logGroups: → its log group's. */
  functions: Record<string, string>;
  logGroups: Record<string, string>;
  table: string;
  bucket: string;
  accessLogsBucket: string;
  jwtSecret: string;
  api: string;
  wsApi?: string;
  queues: Record<QueueName, string>;
  webhookDispatcherDlq: string;
  publisherDlq?: string;
  /** Per stream consumer: its FIFO redo queue and that queue's dead-letter queue. */
  redoQueues: Record<'publisher' | 'webhook_dispatcher', { queue: string; dlq: string }>;
  uploadCompleterDlq: string;
  /** The chat page and widget's bucket and distribution; only with webHosting on. */
  web?: { bucket: string; distribution: string; deployment: string };
  /** Only with alarmEmail (a topic of our own). */
  alarmTopic?: string;
}

export interface Violation {
  ruleName: string;
  severity?: string;
  /** Construct paths of the resources it is about. */
  paths: string[];
}
export interface Ack {
  path: string;
  id: string;
  reason: string;
}
/** cdk-nag AwsSolutions on one shape's stack. */
export interface NagReport {
  /** What is left once the acknowledgements apply. */
  violations: Violation[];
  /** Everything found, acknowledgements ignored. */
  findings: Violation[];
  /** Every acknowledgement the stack made. */
  acks: Ack[];
  /** CDK's warnings and errors on the stack (Annotations.findWarning / findError). */
  annotations: string[];
}

/** What the synth wrote beside one stack's template: `<stack>.ids.json`, `<stack>.nag.json`. */
async function beside<T>(file: string): Promise<T> {
  await templateFiles();
  return JSON.parse(readFileSync(join(process.env.SHAPES_DIR!, file), 'utf8')) as T;
}
export const logicalIds = (stack: string): Promise<StackIds> => beside(`${stack}.ids.json`);
export const nagReport = (stack: keyof typeof SHAPES): Promise<NagReport> => beside(`${stack}.nag.json`);
/** REFUSED_PROPS name → the message `new ChatStack` threw (null: it did not). */
export const refusals = (): Promise<Record<string, string | null>> => beside('refused.json');

/** The two stages' synth (STAGE_CONTEXT): its template files, and what its cdk-nag plugin checked and found. */
export async function stagedSynth(): Promise<{ templates: string[]; nag: { templates: string[]; violations: string[] } }> {
  await templateFiles();
  const templates = readdirSync(join(process.env.SHAPES_DIR!, 'staged')).filter((f) => f.endsWith('.template.json'));
  return { templates, nag: await beside('staged.nag.json') };
}

/**
 * A real synth with every function bundled into `outdir`, in a child process: esbuild's lines stay there.
 * CDK runs the project's esbuild as `npx --no-install esbuild ...` once per function; npx's own start costs about
 * 0.8 s of CPU each, 30 s a synth. An `npx` first on the child's PATH runs node_modules/.bin/esbuild with the
 * same arguments instead (the same binary CDK's npx resolves), and refuses anything else.
 */
export function synthBundled(outdir: string): void {
  const shim = mkdtempSync(join(tmpdir(), 'npx-shim-'));
  try {
    writeFileSync(
      join(shim, 'npx'),
      `#!/bin/sh\nif [ "$1" = --no-install ] && [ "$2" = esbuild ]; then shift 2; exec '${join(ROOT, 'node_modules', '.bin', 'esbuild')}' "$@"; fi\n` +
        `echo "npx shim (test/support/shapes.ts): only 'npx --no-install esbuild' is expected here, got: npx $*" >&2; exit 127\n`,
      { mode: 0o755 },
    );
    const env = { ...process.env, PATH: `${shim}${delimiter}${process.env.PATH ?? ''}` };
    const run = spawnSync(process.execPath, synthArgs(outdir, '--bundled'), { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (run.status !== 0) throw new Error(`bundled synth failed (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  } finally {
    rmSync(shim, { recursive: true, force: true });
  }
}
