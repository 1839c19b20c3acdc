// A stream consumer's bench batches run in a process of their own (forked by stream.ts), so that the CPU time
// measured is the handler's: the bench's process also runs the local gateways, the stack's stream poller and the
// webhook deliverer, whose work would land in any CPU time taken there.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import type { ClientRequest } from 'node:http';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { handlerLoader, type Invocation } from '../../lib/local/handlers';
import { allowanceMs, inFlightMs } from './cost-model';
import { installMeters, portOf } from './meters';

export interface ChildRequest {
  entry: string;
  timeoutSeconds: number;
  /** Run first, unmeasured: the handler's code compiled and its caches filled, as on a consumer that has been running. */
  warm: DynamoDBStreamEvent[];
  /**
   * Then the warm users' records again this many times, together, each round with later sequence numbers (so each
   * is new work: counted, positioned, posted, queued): the JIT's steady state of a consumer under load, which the
   * SDK's code reaches only after thousands of calls (its CPU a call falls about threefold on the way).
   */
  warmRounds: number;
  full: DynamoDBStreamEvent;
  /** Run one by one after the full batch, with the bench's meters: each lane's calls and when they were in flight. */
  lanes: DynamoDBStreamEvent[];
}

export interface ChildLane {
  laneMs: number;
  callsMs: number;
  allowanceMs: number;
  sqs: number;
}

export interface ChildReply {
  /** The process's CPU time (user and system) while the full batch ran, unobserved: the handler's and its SDK clients'. */
  fullCpuMs: number;
  /** The SQS requests the full batch sent (the dispatcher's job batches). */
  fullSqs: number;
  lanes: ChildLane[];
}

/** Sequence numbers a bench event leaves free between rounds (stream.ts numbers each event's records from its base). */
const ROUND_STRIDE = 1_000_000n;

/** A record as a later round delivers it: the same item at a later sequence number. */
function later(record: DynamoDBRecord, round: number): DynamoDBRecord {
  const seq = BigInt(record.dynamodb?.SequenceNumber ?? '0') + BigInt(round) * ROUND_STRIDE;
  return { ...record, eventID: `${record.eventID}-${round}`, dynamodb: { ...record.dynamodb, SequenceNumber: String(seq).padStart(21, '0') } };
}

type Handler = (e: DynamoDBStreamEvent, c: unknown) => Promise<{ batchItemFailures: unknown[] }>;

async function run(req: ChildRequest): Promise<ChildReply> {
  const handler = await handlerLoader<Handler>(join(__dirname, '..', '..'))(req.entry);
  const context = { getRemainingTimeInMillis: () => req.timeoutSeconds * 1000 };
  const ok = async (event: DynamoDBStreamEvent) => {
    const out = await handler(event, context);
    if (out.batchItemFailures.length) throw new Error(`${req.entry}: the bench batch failed ${out.batchItemFailures.length} records`);
  };
  for (const event of req.warm) await ok(event);
  const records = req.warm.flatMap((e) => e.Records);
  for (let round = 1; round <= req.warmRounds; round++) await ok({ Records: records.map((r) => later(r, round)) });
  // The full batch with nothing observing it (an async context would tax every promise): only its SQS requests counted.
  const sqsPort = new URL(process.env.SQS_ENDPOINT ?? 'http://localhost:1').port;
  let fullSqs = 0;
  const onRequest = (m: unknown) => {
    if (portOf((m as { request: ClientRequest }).request) === sqsPort) fullSqs++;
  };
  subscribe('http.client.request.start', onRequest);
  const cpu = process.cpuUsage();
  await ok(req.full);
  const used = process.cpuUsage(cpu);
  unsubscribe('http.client.request.start', onRequest);
  const meters = await installMeters(new Map());
  const lanes: ChildLane[] = [];
  for (const event of req.lanes) {
    const mark = meters.seen.length;
    await ok(event);
    const one = meters.seen.slice(mark).find((i: Invocation) => i.event === event);
    if (!one) throw new Error(`${req.entry}: a lane's invocation was not observed`);
    lanes.push({ laneMs: (one.endedAt ?? one.startedAt) - one.startedAt, callsMs: inFlightMs(one), allowanceMs: allowanceMs(one), sqs: one.counters.sqs ?? 0 });
  }
  meters.uninstall();
  return { fullCpuMs: (used.user + used.system) / 1000, fullSqs, lanes };
}

process.once('message', (req: ChildRequest) => {
  run(req).then(
    (reply) => process.send?.({ reply }, () => process.exit(0)),
    (err: Error) => process.send?.({ error: err.stack ?? err.message }, () => process.exit(1)),
  );
});
