// The whole local stack in one process tree: DynamoDB Local, the S3 emulator, the HTTP gateway, the demo bot.
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startDynamoLocal, type LocalDynamo } from './dynamodb';
import { LocalStackError } from './process';
import { startS3, type LocalS3 } from './s3';
import { ensureTable } from './resources';
import { startHttpGateway } from './http-gateway';
import { webFallback } from './web';
import { startWsGateway, type WsGateway } from './ws-gateway';
import { socketsBack } from './sockets-back';
import { startStreamPoller } from './stream-poller';
import { startLocalQueues } from './sqs';
import { startTtlSweeper } from './ttl-sweeper';
import { publisherFor, REDO_QUEUE, TASK_QUEUE, TASK_WORKER, UPLOAD_COMPLETER, WEBHOOK_DELIVERER, WEBHOOK_DISPATCHER, WEBHOOK_QUEUE } from '../consumers';
import { s3Notifications } from './s3-events';
import { startEchoBot } from '../../examples/echo-bot';
import { applyLocalEnv, jwtSecretFile, REDO_QUEUE_NAMES, type LocalSettings } from './settings';

export interface DemoBot {
  bot_id: string;
  client_key: string;
  secret_key: string;
  /** Set when the echo bot answers the demo bot's webhooks. */
  webhook_secret?: string;
}

export interface RunningStack {
  apiUrl: string;
  /** The WebSocket URL, or undefined when realtime is off. */
  realtimeUrl?: string;
  demoBot: DemoBot;
  stop(): Promise<void>;
}

function assertPortFree(host: string, port: number, envName: string): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const probe: Server = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new LocalStackError(
          err.code === 'EADDRINUSE'
            ? `Port ${port} (${envName}) is already in use: stop whatever uses it (another \`npm start\`?) or set ${envName} to a free port.`
            : `Cannot listen on ${host}:${port} (${envName}): ${err.message}`,
        ),
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolvePort()));
  });
}

/** A random signing key made once and kept under the data folder (Secrets Manager plays this part on AWS). */
function ensureJwtSecret(file: string): void {
  if (!existsSync(file)) writeFileSync(file, randomBytes(48).toString('hex'), { mode: 0o600 });
}

/** The demo bot (made on first start); with the echo bot on, its webhook points at the echo bot. */
async function ensureDemoBot(dataDir: string, webhookUrl: string | undefined): Promise<DemoBot> {
  // Imported after applyLocalEnv so the handlers' config sees the local endpoints.
  const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
  const { readBot } = await import('../../lambdas/entities/bots');
  const file = resolve(dataDir, 'demo-bot.json');
  let demo: DemoBot | undefined;
  let bot = undefined as Awaited<ReturnType<typeof readBot>>;
  if (existsSync(file)) {
    demo = JSON.parse(readFileSync(file, 'utf8')) as DemoBot;
    bot = await readBot(demo.bot_id);
  }
  if (!demo || !bot) {
    const made = await createBot({ name: 'Demo bot' });
    bot = made.bot;
    demo = { bot_id: bot.id, client_key: bot.client_key, secret_key: made.secretKey };
  }
  if (webhookUrl && bot.webhook_url !== webhookUrl) bot = (await updateBot(bot.id, { webhook_url: webhookUrl })).bot;
  demo = { ...demo, webhook_secret: webhookUrl ? bot.webhook_secret : undefined };
  writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  return demo;
}

/** The processes of a running stack, for tests that stop one of them and for cleaning up after a crash. */
function writePids(dataDir: string, pids: Record<string, number | undefined>): void {
  writeFileSync(resolve(dataDir, 'local-stack.json'), JSON.stringify(pids) + '\n');
}

/** A stack killed with SIGKILL whose children's guards were killed with it left them running: stop them first. */
function stopOrphans(dataDir: string, log: (line: string) => void): void {
  const file = resolve(dataDir, 'local-stack.json');
  if (!existsSync(file)) return;
  const pids = JSON.parse(readFileSync(file, 'utf8')) as Record<string, number | undefined>;
  const alive = (pid?: number) => {
    if (!pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (alive(pids.stack)) return; // that stack is still running: the port checks will say so
  for (const name of ['dynamodb', 's3'] as const) {
    if (alive(pids[name])) {
      log(`stopping ${name} (pid ${pids[name]}) left behind by a stack that did not stop cleanly`);
      process.kill(pids[name] as number, 'SIGKILL');
      const until = Date.now() + 5000;
      while (alive(pids[name]) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
}

export async function startLocalStack(s: LocalSettings, log: (line: string) => void): Promise<RunningStack> {
  // The echo bot listens on loopback, where webhooks go only with the setting on.
  if (s.echoBot && !s.webhookAllowLoopback) throw new Error('ECHO_BOT needs WEBHOOK_ALLOW_LOOPBACK on (its webhook is on localhost): turn one off or the other on');
  if (existsSync(s.dataDir)) stopOrphans(s.dataDir, log);
  await assertPortFree(s.host, s.port, 'PORT');
  await assertPortFree(s.host, s.dynamodbPort, 'DYNAMODB_PORT');
  await assertPortFree(s.host, s.s3Port, 'S3_PORT');
  if (s.realtime) await assertPortFree(s.host, s.wsPort, 'WS_PORT');
  await assertPortFree(s.host, s.sqsPort, 'SQS_PORT');
  if (s.echoBot) await assertPortFree(s.host, s.echoBotPort, 'ECHO_BOT_PORT');
  mkdirSync(s.dataDir, { recursive: true });
  applyLocalEnv(s);
  ensureJwtSecret(jwtSecretFile(s));

  const stops: (() => Promise<void>)[] = [];
  let s3: LocalS3 | undefined;
  const stop = async () => {
    for (const fn of stops.reverse()) await fn().catch(() => undefined);
  };
  try {
    const dynamo: LocalDynamo = await startDynamoLocal(s.host, s.dynamodbPort, s.dynamodbInMemory ? null : resolve(s.dataDir, 'dynamodb'));
    stops.push(() => dynamo.stop());
    // However this process ends (a crash, a closed pipe), do not leave the emulators running.
    process.once('exit', () => {
      for (const child of [dynamo.process, s3?.process]) if (child && child.exitCode === null) child.kill('SIGKILL');
    });
    log(`DynamoDB Local on ${dynamo.endpoint}`);
    const ddb = new DynamoDBClient({ endpoint: dynamo.endpoint, region: process.env.AWS_REGION });
    const table = await ensureTable(ddb, s.tableName);
    log(`table ${s.tableName}: ${table}`);
    ddb.destroy();
    // A new table holds nothing to move: it is at the current layout from the start.
    if (table === 'created') await (await import('../../lambdas/entities/layout')).writeLayout((await import('../../lambdas/shared/config')).config().chatListShards);

    const deadLetterDir = resolve(s.dataDir, 'dead-letter');
    // Pending work kept across a restart: queued messages, S3 events, the stream consumers' positions.
    const journalDir = resolve(s.dataDir, 'queues');
    const checkpointFile = resolve(s.dataDir, 'stream-checkpoints.json');
    // A table kept in memory is gone: so is the work that referred to it.
    if (s.dynamodbInMemory) for (const path of [journalDir, checkpointFile]) rmSync(path, { recursive: true, force: true });
    // The bucket's notification: a browser's POST under bots/ invokes the upload completer.
    const notifications = s3Notifications({ root: s.root, def: UPLOAD_COMPLETER, deadLetterDir, journalDir, log });
    s3 = await startS3(s.root, s.host, s.s3Port, resolve(s.dataDir, 's3'), s.bucketName, notifications.journalFile, (id, event) => notifications.deliver(id, event));
    writePids(s.dataDir, { stack: process.pid, dynamodb: dynamo.process.pid, s3: s3.process.pid });
    const started = s3;
    stops.push(() => started.stop(), () => notifications.idle());
    log(`S3 emulator on ${s3.endpoint} (bucket ${s.bucketName})`);

    const apiUrl = `http://localhost:${s.port}`;
    const echoUrl = s.echoBot ? `http://localhost:${s.echoBotPort}/webhook` : undefined;
    const demoBot = await ensureDemoBot(s.dataDir, echoUrl);
    notifications.resume();

    const queues = await startLocalQueues({
      host: s.host,
      port: s.sqsPort,
      root: s.root,
      deadLetterDir,
      journalDir,
      consumers: {
        webhooks: { def: WEBHOOK_DELIVERER, queue: WEBHOOK_QUEUE, maxConcurrency: s.webhookConcurrency },
        webhooks_slow: { def: WEBHOOK_DELIVERER, queue: WEBHOOK_QUEUE, maxConcurrency: s.webhookSlowConcurrency, deadLetterQueue: 'webhooks_dlq' },
        webhooks_dlq: undefined,
        tasks: { def: TASK_WORKER, queue: TASK_QUEUE },
        tasks_dlq: undefined,
        // The stream consumers' FIFO redo queues, each consumed by its own consumer (dead letters: <name>_dlq).
        [REDO_QUEUE_NAMES.publisher]: { def: publisherFor(s.realtime), queue: REDO_QUEUE, fifo: true },
        [REDO_QUEUE_NAMES.webhook_dispatcher]: { def: WEBHOOK_DISPATCHER, queue: REDO_QUEUE, fifo: true },
      },
      log,
      visibilityTimeoutMs: process.env.LOCAL_SQS_VISIBILITY_MS ? Number(process.env.LOCAL_SQS_VISIBILITY_MS) : undefined,
    });
    stops.push(() => queues.stop());
    // Data of an older version (or another CHAT_LIST_SHARDS) moves in the background while the stack answers.
    const migration = await (await import('../../lambdas/flows/migrate')).startMigration();
    if (migration) log(`data move ${migration.task_id}: ${migration.status} (the stack answers meanwhile)`);
    log(`SQS API on ${queues.endpoint} (webhook, task and redo queues; dead letters in ${deadLetterDir})`);

    let realtimeUrl: string | undefined;
    let ws: WsGateway | undefined;
    if (s.realtime) {
      const gateway = await startWsGateway({ host: s.host, port: s.wsPort, root: s.root, idleMs: s.wsIdleMs });
      ws = gateway;
      stops.push(() => gateway.close());
      realtimeUrl = process.env.REALTIME_URL;
      log(`WebSocket gateway on ${realtimeUrl} (@connections API at ${process.env.WS_MANAGEMENT_ENDPOINT})`);
    } else {
      log('realtime is off (REALTIME=off): no WebSocket gateway; the publisher only moves chats');
    }
    const poller = await startStreamPoller({
      endpoint: dynamo.endpoint,
      region: process.env.AWS_REGION as string,
      tableName: s.tableName,
      root: s.root,
      consumers: [publisherFor(s.realtime), WEBHOOK_DISPATCHER],
      deadLetterDir,
      checkpointFile,
      log,
      idleMs: s.streamPollMs,
      // Realtime on: a restart publishes the backlog once the sockets the crash cut are back (or a while passed).
      holdBacklog: ws ? (stopped) => socketsBack({ liveConnections: ws.connections, maxMs: s.streamResumeWaitMs, log, stopped }) : undefined,
    });
    stops.push(() => poller.stop());
    // Expired items deleted as AWS's TTL does (DynamoDB Local keeps them), their REMOVEs on the stream.
    const sweeper = startTtlSweeper({ endpoint: dynamo.endpoint, region: process.env.AWS_REGION as string, tableName: s.tableName, intervalMs: s.ttlSweepMs, log });
    stops.push(() => sweeper.stop());

    const fallback = await webFallback(s.root, { api_url: apiUrl, client_key: demoBot.client_key });
    const http = await startHttpGateway({ host: s.host, port: s.port, root: s.root, fallback });
    // close() ends idle keep-alive connections only: one busy at that moment (the echo bot's reply, say) would
    // then stay open for its 65 s. Requests in flight get a second to finish; what is still open is closed.
    stops.push(
      () =>
        new Promise((r) => {
          http.close(() => r());
          setTimeout(() => http.closeAllConnections(), 1000).unref();
        }),
    );
    if (s.echoBot && demoBot.webhook_secret) {
      const echo = await startEchoBot({ port: s.echoBotPort, host: s.host, apiUrl, secretKey: demoBot.secret_key, webhookSecret: demoBot.webhook_secret, log: (l) => log(`echo bot: ${l}`) });
      stops.push(() => new Promise((r) => echo.close(() => r())));
      log(`echo bot on ${echoUrl}: it answers the demo bot's chats`);
    }
    return { apiUrl, realtimeUrl, demoBot, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
