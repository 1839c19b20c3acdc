// The stream consumers' throughput model: records/s per shard = batch size × parallelization ÷ batch time, for
// the real handlers (publisher, webhook dispatcher) run in this process against the bench's stack on a batch of
// many users' messages, each user with a live socket. The users' lanes run side by side (lambdas/aws/stream-batch.ts),
// but on the one thread of the function: the batch waits for all its lanes' CPU on the function's share of a vCPU,
// plus the AWS latency allowances of one lane's calls (timed alone, the median of a few users'; calls made side by
// side overlapping: cost-model.ts allowanceMs). The local emulators answer one call at a time, so a full batch's
// wall time here would measure them, not the handler.
import { randomUUID } from 'node:crypto';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import WebSocket from 'ws';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { PUBLISHER, STREAM_BATCH_SIZE, STREAM_DELIVERY, WEBHOOK_DISPATCHER, type StreamConsumerDef } from '../../lib/consumers';
import type { Invocation } from '../../lib/local/handlers';
import { ALLOWANCE_MS, VCPU_MEMORY_MB, memoryGb, streamBatchMs } from './cost-model';
import type { ChildReply, ChildRequest } from './stream-child';
import { installMeters } from './meters';
import { request, type Api, type LiveSession } from './http';
import { out } from './report';
import type { Target } from './targets';
import { options } from './options';

/** The target for a shard. */
export const STREAM_TARGET_RECORDS_PER_S = 1000;

export interface ConsumerFigures {
  /** Records the child ran, unmeasured, before the full batch: the warm users' lanes, then WARM_ROUNDS rounds of them. */
  warm_records: number;
  /** One user's records run alone by the handler, here: what a lane waits. */
  lane_ms: number;
  /**
   * Of it, the time with a call in flight: the local emulators' and gateways' answers (DynamoDB Local's, mostly).
   * On AWS each call waits its allowance instead.
   */
  lane_calls_ms: number;
  /** The rest: the handler's time between its calls, on this machine's core (its CPU beyond the calls' own). */
  lane_own_ms: number;
  /** The AWS latency allowances of that lane's calls and of the batch's sends. */
  allowance_ms: number;
  /**
   * The process's CPU time while the full batch ran: its lanes share one thread, so this is the CPU the batch
   * waits for. An upper bound of the handler's: the local gateways' share (the @connections posts, the SQS API),
   * the sockets' and the local stream poller's are in it.
   */
  batch_cpu_ms: number;
  /** How many times as long that CPU runs on the function's share of a vCPU (cost-model.ts VCPU_MEMORY_MB ÷ its memory, at least 1). */
  cpu_scale: number;
  /** batch_cpu_ms × cpu_scale + allowance_ms: what a batch takes on AWS. */
  batch_ms: number;
  records_per_s_per_shard: number;
  /** The same with the function at a whole vCPU (1,769 MB; cpu_scale 1): what more memory would buy. */
  records_per_s_per_shard_at_1_vcpu: number;
}

export interface StreamFigures {
  batch_size: number;
  parallelization_factor: number;
  users_per_batch: number;
  records_per_user: number;
  publisher: ConsumerFigures;
  dispatcher: ConsumerFigures;
  publisher_records_per_s_per_shard: number;
  dispatcher_records_per_s_per_shard: number;
}

const SEQ_BASE = BigInt(Date.now()) * 1_000_000n;
/** Users whose lane is timed alone, beside the batch's: the median of their times is the figure. */
const LANES_TIMED = 3;
/** Users whose records each consumer runs first, unmeasured (stream-child.ts `warm`). */
const LANES_WARM = 3;
/**
 * Rounds of the warm users' records the child runs before the measured batch (stream-child.ts `warmRounds`): a
 * consumer that keeps up with a busy shard has made thousands of calls, and the SDK's CPU a call settles only
 * then. A quick run warms less (its figure is higher: it checks the phase runs, not the figure).
 */
const WARM_ROUNDS = options.quick ? 20 : 500;
/** Conversations made at once while the batch's users are set up (their setup is not timed). */
const AT_ONCE = 4;

/** Until no invocation of the stack ended for 200 ms. */
async function quiet(seen: Invocation[]): Promise<void> {
  for (let n = -1; n !== seen.length; ) {
    n = seen.length;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A batch's conversation: its two message items, and its chat as it was before them. */
interface Conversation {
  items: Record<string, unknown>[];
  chat: Record<string, unknown>;
}

/**
 * A user with a chat, a live socket on its channel (subscribed recoverable, as the client package subscribes: each
 * publication is positioned before it is posted), one message and the bot's reply.
 */
async function conversation(apiUrl: string, bot: { client_key: string; secretKey: string }, n: number, sockets: WebSocket[]): Promise<Conversation> {
  const s = await request<LiveSession>(apiUrl, 'POST', '/api/client/session', { json: { client_key: bot.client_key, external_id: `bench-stream-${n}` } });
  const ws = new WebSocket(s.realtime.url);
  sockets.push(ws);
  await new Promise((r) => ws.once('open', r));
  const subscribed = new Promise((r) => ws.once('message', r));
  ws.send(`${JSON.stringify({ id: 1, connect: { token: s.realtime.token } })}\n${JSON.stringify({ id: 2, subscribe: { channel: s.realtime.channel, recoverable: true } })}`);
  await subscribed;
  const chat = await request<Api['Chat']>(apiUrl, 'POST', '/api/client/chats', { token: s.session_token, json: { name: 'Support' } });
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo, queryAll, tableName } = await import('../../lambdas/aws/dynamo');
  const { keys } = await import('../../lambdas/entities/keys');
  const before = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.chat(s.user.id, chat.id), ConsistentRead: true }))).Item;
  if (!before) throw new Error(`the chat ${chat.id} was not found`);
  await request(apiUrl, 'POST', `/api/client/chats/${chat.id}/messages`, { token: s.session_token, json: { content: `question ${n}` } });
  await request(apiUrl, 'POST', `/api/bot/chats/${chat.id}/messages`, { token: bot.secretKey, json: { content: `answer ${n}` } });
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: 'entity = :message',
    ExpressionAttributeValues: { ':pk': keys.userPartition(s.user.id), ':prefix': keys.messagePrefix(chat.id), ':message': 'message' },
  });
  return { items: items.sort((a, b) => String(a.created_at).localeCompare(String(b.created_at))), chat: before };
}

/**
 * The chats put back as they were before their messages: the stack's own publisher counted the messages already,
 * and a chat whose activity is at the reply would refuse the message's first write (an extra call a live shard
 * does not make: there the message comes before the reply).
 */
async function chatsBeforeTheirMessages(conversations: Conversation[]): Promise<void> {
  const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
  const { dynamo, tableName } = await import('../../lambdas/aws/dynamo');
  for (const { chat } of conversations) await dynamo.send(new PutCommand({ TableName: tableName(), Item: chat }));
}

/** The items as a shard gives them: INSERTs, users interleaved, each user's in order; sequence numbers not yet counted. */
function streamBatch(perUser: Record<string, unknown>[][]): DynamoDBStreamEvent {
  const records: DynamoDBRecord[] = [];
  for (let k = 0; perUser.some((items) => items[k]); k++) {
    for (const items of perUser) {
      const item = items[k];
      if (!item) continue;
      const image = marshall(item, { removeUndefinedValues: true });
      records.push({
        eventID: randomUUID(),
        eventName: 'INSERT',
        eventSource: 'aws:dynamodb',
        dynamodb: {
          Keys: { pk: image.pk, sk: image.sk },
          NewImage: image as NonNullable<DynamoDBRecord['dynamodb']>['NewImage'],
          SequenceNumber: String(SEQ_BASE + BigInt(records.length)).padStart(21, '0'),
          StreamViewType: 'NEW_AND_OLD_IMAGES',
        },
      } as DynamoDBRecord);
    }
  }
  return { Records: records };
}

/** Runs the consumer's batches in a process of its own (stream-child.ts): its CPU time is the handler's alone. */
async function runApart(def: StreamConsumerDef, req: Omit<ChildRequest, 'entry' | 'timeoutSeconds'>): Promise<ChildReply> {
  const child = fork(join(__dirname, 'stream-child.ts'), { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const answer = new Promise<ChildReply>((resolve, reject) => {
    child.once('message', (m: { reply?: ChildReply; error?: string }) => (m.reply ? resolve(m.reply) : reject(new Error(`${def.id}: ${m.error}`))));
    child.once('exit', (code) => reject(new Error(`${def.id}: the batch's process ended (${code}) without an answer`)));
  });
  child.send({ entry: def.entry, timeoutSeconds: def.timeoutSeconds, ...req } satisfies ChildRequest);
  return answer;
}

/**
 * A full batch's time on AWS (cost-model.ts streamBatchMs): the full batch's CPU time here, on the function's share
 * of a vCPU, plus the allowances one lane's calls wait for on AWS (any sends included; cost-model.ts allowanceMs) and
 * the full batch's job sends beyond the lane's. Each of LANES_TIMED users' lanes is run alone for its allowances,
 * and the median lane is the figure.
 */
async function modelBatch(def: StreamConsumerDef, full: DynamoDBStreamEvent, warm: DynamoDBStreamEvent[], lanes: DynamoDBStreamEvent[]): Promise<ConsumerFigures> {
  const apart = await runApart(def, { warm, warmRounds: WARM_ROUNDS, full, lanes });
  const scale = Math.max(1, VCPU_MEMORY_MB / (memoryGb(def) * 1024));
  // The full batch's sends after the lanes (the dispatcher's jobs, 10 per call) beyond a lane's own.
  const timed = apart.lanes.map((l) => ({ ...l, allowance: l.allowanceMs + Math.max(0, apart.fullSqs - l.sqs) * ALLOWANCE_MS.sqs }));
  timed.sort((x, y) => x.allowance - y.allowance);
  const { laneMs, callsMs, allowance } = timed[Math.floor(timed.length / 2)];
  const cpuMs = apart.fullCpuMs;
  const perShard = (cpuScale: number) =>
    Math.round((full.Records.length * STREAM_DELIVERY.parallelizationFactor * 1000) / streamBatchMs({ cpuMs, cpuScale, allowanceMs: allowance }));
  return {
    warm_records: warm.reduce((n, e) => n + e.Records.length, 0) * (1 + WARM_ROUNDS),
    lane_ms: Math.round(laneMs),
    lane_calls_ms: Math.round(callsMs),
    lane_own_ms: Math.round((laneMs - callsMs) * 10) / 10,
    allowance_ms: Math.round(allowance),
    batch_cpu_ms: Math.round(cpuMs),
    cpu_scale: Math.round(scale * 100) / 100,
    batch_ms: Math.round(streamBatchMs({ cpuMs, cpuScale: scale, allowanceMs: allowance })),
    records_per_s_per_shard: perShard(scale),
    records_per_s_per_shard_at_1_vcpu: perShard(1),
  };
}

/** One full batch of each consumer: STREAM_BATCH_SIZE records of STREAM_BATCH_SIZE / 2 users (40 of 20 with --quick), a message and a reply each. */
export async function streamThroughput(apiUrl: string, webhookUrl: string): Promise<StreamFigures> {
  const meters = await installMeters(new Map());
  const sockets: WebSocket[] = [];
  try {
    const { createBot, updateBot } = await import('../../lambdas/flows/bot-admin');
    const { bot, secretKey } = await createBot({ name: 'bench stream' });
    // Its messages are the dispatcher's too (marked for the webhook at the send).
    await updateBot(bot.id, { webhook_url: webhookUrl });
    // A quick run's batch is smaller: the CPU a record takes is the same, the set-up shorter.
    const users = options.quick ? 20 : STREAM_BATCH_SIZE / 2;
    // LANES_WARM + LANES_TIMED more users than the batch has: each one's lane runs alone.
    // Made AT_ONCE at a time (each user's own requests in order), each user's items at its place.
    const conversations: Conversation[] = [];
    let next = 0;
    const worker = async () => {
      for (let n = next++; n < users + LANES_WARM + LANES_TIMED; n = next++) conversations[n] = await conversation(apiUrl, { client_key: bot.client_key, secretKey }, n, sockets);
    };
    await Promise.all(Array.from({ length: AT_ONCE }, worker));
    // The stack's own consumers done with what the conversations wrote, so that they do not run beside the timed batches.
    await quiet(meters.seen);
    await chatsBeforeTheirMessages(conversations);
    await quiet(meters.seen);
    const perUser = conversations.map((c) => c.items);
    const full = streamBatch(perUser.slice(0, users));
    const [warm, lanes] = [perUser.slice(users, users + LANES_WARM), perUser.slice(users + LANES_WARM)].map((some) => some.map((items) => streamBatch([items])));
    // Each consumer's batches leave work for the stack (their writes' own records; the dispatcher's webhooks):
    // done before the next runs, and before the bench's next phase.
    const publisher = await modelBatch(PUBLISHER, full, warm, lanes);
    await quiet(meters.seen);
    const dispatcher = await modelBatch(WEBHOOK_DISPATCHER, full, warm, lanes);
    await quiet(meters.seen);
    return {
      batch_size: full.Records.length,
      parallelization_factor: STREAM_DELIVERY.parallelizationFactor,
      users_per_batch: users,
      records_per_user: full.Records.length / users,
      publisher,
      dispatcher,
      publisher_records_per_s_per_shard: publisher.records_per_s_per_shard,
      dispatcher_records_per_s_per_shard: dispatcher.records_per_s_per_shard,
    };
  } finally {
    for (const ws of sockets) ws.close();
    meters.uninstall();
  }
}

/** Both consumers against the shard target. */
export function streamTargets(s: StreamFigures): Record<string, Target> {
  const at = (value: number): Target => ({ value, target: `>= ${STREAM_TARGET_RECORDS_PER_S}`, met: value >= STREAM_TARGET_RECORDS_PER_S });
  return { 'stream.publisher_records_per_s_per_shard': at(s.publisher_records_per_s_per_shard), 'stream.dispatcher_records_per_s_per_shard': at(s.dispatcher_records_per_s_per_shard) };
}

export function reportStream(s: StreamFigures): void {
  out(`\nStream consumers: one batch of ${s.batch_size} records (${s.users_per_batch} users × ${s.records_per_user}), parallelization ${s.parallelization_factor}`);
  for (const [name, f] of [['publisher', s.publisher], ['dispatcher', s.dispatcher]] as const) {
    out(`  ${name.padEnd(11)} batch CPU ${f.batch_cpu_ms} ms here × ${f.cpu_scale} (its CPU share) + ${f.allowance_ms} ms a lane's allowances = ${f.batch_ms} ms a batch: ${f.records_per_s_per_shard} records/s per shard (${f.records_per_s_per_shard_at_1_vcpu} at a whole vCPU; a lane alone: ${f.lane_ms} ms here, ${f.lane_own_ms} ms of it between calls)`);
  }
}
