// The IAM tier's harness: moto with what the synthesized stack describes, one IAM user per function holding
// that function's role policy, and each function's handler loaded in-process with only its user's keys
// (a cold start of its own: fresh modules, so its SDK clients are made with those credentials).
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';
import { DynamoDBStreamsClient, DescribeStreamCommand, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { startMoto, type Moto } from './moto-server';
import { startRecorder, type Call, type Recorder } from './recorder';
import { createUser, putPolicy, type Keys } from './iam';
import { createStack, motoPolicy, synthTemplate, REGION, type MotoStack } from './template';
import { matchesFilter, toLambdaRecord } from '../../lib/local/stream-records';
import type { FunctionDef } from '../../lib/routes';
import type { StreamConsumerDef } from '../../lib/consumers';
import { freePort } from '../support/ports';

const ROOT = join(__dirname, '..', '..');
export const JWT_SECRET = 'moto-tier-jwt-secret-'.padEnd(64, 'x'); // 48+ characters, as the stack's is 64

/** Errors that are answers, not refusals: the handlers expect and handle them. */
const EXPECTED_ERRORS = new Set(['ConditionalCheckFailedException', 'TransactionCanceledException', 'GoneException']);

export const isRefusal = (c: Call) => c.status >= 400 && !EXPECTED_ERRORS.has(c.errorType ?? '');
export const describeCall = (c: Call) => `${c.caller} ${c.service}:${c.operation} → ${c.status} ${c.errorType ?? ''}: ${c.message ?? ''}`;

/** The IAM action AWS checks for a call (what a removed action must show up as). */
export function iamActionOf(c: Call): string {
  if (c.deniedAction) return c.deniedAction;
  if (c.service === 'sqs') return c.operation.startsWith('SendMessage') ? 'sqs:SendMessage' : `sqs:${c.operation}`;
  if (c.service === 'execute-api') return 'execute-api:ManageConnections';
  if (c.service === 's3') return `s3:${c.operation.split(' ')[0]}`;
  return `${c.service}:${c.operation}`;
}

export interface Handle {
  id: string;
  env: Record<string, string>;
  /** The module's handler, loaded by require (each takes its own event type; invoke names what it answers). */
  handler: (event: unknown, context?: unknown) => Promise<unknown>;
}

export interface Webhooks {
  url: string;
  received: { headers: Record<string, string | string[] | undefined>; body: string }[];
  /** The status the receiver answers with, or 'hang': it never answers (the deliverer times out). */
  status: number | 'hang';
}

export class Harness {
  moto!: Moto;
  rec!: Recorder;
  stack!: MotoStack;
  keys: Record<string, Keys> = {};
  webhooks!: Webhooks;
  private webhookServer!: Server;
  private startEnv = { ...process.env };
  private streams!: DynamoDBStreamsClient;
  private iterator?: string;
  /** Every stream record so far, as Lambda delivers them. */
  records: DynamoDBRecord[] = [];
  /** Where the current run's records start in `records` (beginRun). */
  private runFrom = 0;
  /** Each stream consumer's first batch (its plain flow's): what every later run of it is given again. */
  private firstBatch = new Map<string, DynamoDBRecord[]>();

  async start(): Promise<void> {
    // The SDK's notice about Node 22 (this machine may run 20) would crowd the output.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
    this.moto = await startMoto();
    try {
      this.rec = await startRecorder(this.moto.endpoint, () => this.keys.admin);
      this.stack = await createStack(this.moto.endpoint, await synthTemplate(), JWT_SECRET);
      // Admin: creates bots (lambdas/flows/bot-admin.ts, as the bot CLI does) and reads the stream and queues.
      this.keys.admin = await createUser(this.moto.endpoint, 'admin', { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] });
      this.rec.owners.set(this.keys.admin.accessKeyId, 'admin');
      this.rec.allowed.set('admin', new Set(['*']));
      for (const [id, fn] of Object.entries(this.stack.functions)) {
        const { document, allowed } = motoPolicy(fn.statements);
        this.keys[id] = await createUser(this.moto.endpoint, id, document);
        this.rec.owners.set(this.keys[id].accessKeyId, id);
        this.rec.secrets.set(this.keys[id].accessKeyId, this.keys[id].secretAccessKey);
        this.rec.policies.set(id, document);
        this.rec.allowed.set(id, allowed);
      }
      await this.moto.enforceAuth();
    } catch (err) {
      await this.stop();
      throw err;
    }
    const received: Webhooks['received'] = [];
    const port = await freePort();
    this.webhooks = { url: `http://127.0.0.1:${port}/hook`, received, status: 200 };
    this.webhookServer = createServer((req, res) => void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      const { status } = this.webhooks;
      if (status !== 'hang') res.writeHead(status).end();
    })());
    await new Promise<void>((r) => this.webhookServer.listen(port, '127.0.0.1', () => r()));
    this.streams = new DynamoDBStreamsClient({ endpoint: this.rec.endpoint, region: REGION, credentials: this.keys.admin });
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  }

  async stop(): Promise<void> {
    this.streams?.destroy();
    if (this.webhookServer) {
      this.webhookServer.closeAllConnections();
      await new Promise((r) => this.webhookServer.close(r));
    }
    await this.rec?.stop();
    await this.moto?.stop();
    process.env = { ...this.startEnv };
  }

  /** The environment a function runs with: the template's, moto's endpoints, and only its user's keys. */
  envOf(id: string): Record<string, string> {
    const base = Object.fromEntries(Object.entries(this.startEnv).filter(([k]) => !/^AWS_|_ENDPOINT$|^JWT_SECRET_FILE$/.test(k))) as Record<string, string>;
    const e = this.rec.endpoint;
    return {
      ...base,
      ...this.stack.functions[id].env,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: this.keys[id].accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.keys[id].secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      DYNAMODB_ENDPOINT: e,
      S3_ENDPOINT: e,
      SQS_ENDPOINT: e,
      SECRETS_MANAGER_ENDPOINT: e,
      // moto serves @connections at the root only (AWS: the stage's callback URL, …/live).
      ...(this.stack.functions[id].env.WS_MANAGEMENT_ENDPOINT && { WS_MANAGEMENT_ENDPOINT: e }),
      // One retry, without delay, so a failing webhook reaches the dead-letter queue in two deliveries.
      WEBHOOK_RETRY_DELAYS: '0',
      // An erasure's job receivable at once (15 s on AWS, for requests in flight), and a retention task's
      // (on AWS it waits for the bot cache too).
      ERASE_DELAY_SECONDS: '0',
      BOT_CACHE_TTL_MS: '0',
      // The deliverer's flow waits this out once per run (the receiver hanging); its receiver answers at once
      // otherwise (in this process, on 127.0.0.1).
      WEBHOOK_TIMEOUT_MS: '1000',
      // The test's webhook receiver listens on 127.0.0.1 (the stack never sets this: test/infra/stack-settings).
      WEBHOOK_ALLOW_LOOPBACK: 'on',
      // moto is slower than AWS: a TransactWriteItems copies the whole table first (seconds once the run has
      // filled it, on a loaded machine); a call cut short would be retried by the SDK while moto still runs it.
      AWS_REQUEST_TIMEOUT_MS: '30000',
      // The handlers' logs (a 500 logs its error) only on request: a refused call is reported by the test
      // itself, with the function, the action and moto's message.
      POWERTOOLS_LOG_LEVEL: process.env.MOTO_TIER_LOGS ? 'INFO' : 'SILENT',
    };
  }

  /** A cold start of the function: fresh modules loaded with its environment. */
  load(id: string): Handle {
    const def = this.stack.functions[id].def;
    jest.resetModules();
    const env = this.envOf(id);
    process.env = { ...env };
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh load after jest.resetModules(), with this function's environment (an import() is cached)
    const mod = require(join(ROOT, def.entry)) as Pick<Handle, 'handler'>;
    return { id, env, handler: mod.handler };
  }

  /**
   * Set by a variant: once its function was refused the action taken away, the flow ends at that function's next
   * invocation (what comes after could only be refused again, or pass; the other functions' calls, cleaning up, go on).
   */
  stopOnceRefused?: { id: string; refused: () => boolean };

  /** Runs a handler with its function's environment (credentials are read on its first call). */
  async invoke<T = unknown>(h: Handle, event: unknown, context?: unknown): Promise<T> {
    if (this.stopOnceRefused?.id === h.id && this.stopOnceRefused.refused()) throw new Error(`${h.id} was refused the action taken away: the flow stops before its next invocation`);
    process.env = { ...h.env };
    return (await h.handler(event, context)) as T;
  }

  /** A module of lambdas/ loaded with admin credentials (bots.ts for createBot/updateBot). */
  admin<T>(path: string): T {
    jest.resetModules();
    const e = this.rec.endpoint;
    process.env = {
      ...process.env,
      TABLE_NAME: this.stack.tableName,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: this.keys.admin.accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.keys.admin.secretAccessKey,
      DYNAMODB_ENDPOINT: e,
      // As the bot CLI on the local stack: the webhook receiver is on 127.0.0.1.
      WEBHOOK_ALLOW_LOOPBACK: 'on',
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh load after jest.resetModules(), with admin credentials (an import() is cached)
    return require(join(ROOT, path)) as T;
  }

  /** Replaces a function's policy in moto (and the recorder's copy), e.g. without one action. */
  async setPolicy(id: string, without?: string): Promise<void> {
    const { document, allowed } = motoPolicy(this.stack.functions[id].statements, without);
    await this.moto.openAuth();
    try {
      await putPolicy(this.moto.endpoint, id, document);
    } finally {
      await this.moto.enforceAuth();
    }
    this.rec.allowed.set(id, allowed);
    this.rec.policies.set(id, document);
  }

  /** New records of the table's stream since the last read, read from moto's stream as Lambda's poller does. */
  async readStream(): Promise<DynamoDBRecord[]> {
    if (!this.iterator) {
      const { StreamDescription } = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.stack.streamArn }));
      const shard = StreamDescription!.Shards![0].ShardId!;
      const it = await this.streams.send(new GetShardIteratorCommand({ StreamArn: this.stack.streamArn, ShardId: shard, ShardIteratorType: 'TRIM_HORIZON' }));
      this.iterator = it.ShardIterator;
    }
    const out: DynamoDBRecord[] = [];
    for (;;) {
      const page = await this.streams.send(new GetRecordsCommand({ ShardIterator: this.iterator }));
      this.iterator = page.NextShardIterator;
      for (const r of page.Records ?? []) out.push(toLambdaRecord(r, this.stack.streamArn, REGION));
      if (!page.Records?.length) break;
    }
    this.records.push(...out);
    return out;
  }

  /** A run of a flow begins (a variant): the records written before it are read, so later reads hold only its own. */
  async beginRun(): Promise<void> {
    await this.readStream();
    this.runFrom = this.records.length;
  }

  /**
   * A stream consumer's batch, the records its event filters let through (as the event source mapping delivers
   * them): on its first run (the plain flow) every record so far; on each later run (a variant) those same
   * records, where every call was accepted, and the ones written since the run began. Not the whole stream
   * again: a variant would redo every record of the run so far (each a call or more), while what it must be
   * refused is what the first batch called.
   */
  streamEvent(def: StreamConsumerDef) {
    const first = this.firstBatch.get(def.id);
    const records = first ? [...first, ...this.records.slice(Math.max(this.runFrom, first.length))] : this.records;
    if (!first) this.firstBatch.set(def.id, [...this.records]);
    return { Records: records.filter((r) => def.filters.some((f) => matchesFilter(f, r))) };
  }

  /** Calls made since `from` that were refused. */
  refusals(from: number): Call[] {
    return this.rec.calls.slice(from).filter(isRefusal);
  }
}

export type { FunctionDef };
