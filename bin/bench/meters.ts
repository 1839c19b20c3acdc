// What each handler invocation did, counted where it happens (shared by the round-trip and cost phases).
// The handlers run in this process (lib/local/handlers.ts runs each in its own async context while observed):
// - DynamoDB: two middlewares on the functions' very client (the document client shares its stack): one asks
//   for ConsumedCapacity with INDEXES on a copy of each command's input, one right after the SDK's retry
//   middleware counts each HTTP request sent (an SDK retry is the round trip it is) and adds up the units,
//   read or write, table or index, with the AWS corrections below;
// - every other AWS call (SQS, the @connections API, S3, Secrets Manager) and the webhook POSTs: the
//   diagnostics channels of node:http and undici (fetch), which run in the caller's async context.
// Each call is also kept with when it was in flight (`Invocation.spans`): calls made side by side overlap on AWS
// too (cost-model.ts allowanceMs).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { FinalizeRequestMiddleware, InitializeMiddleware } from '@smithy/types';
import { invocationObservers, invocations, type CallSpan, type Invocation } from '../../lib/local/handlers';
import { itemBytes, type KeyLoadRecorder } from './key-loads';
import { keys } from '../../lambdas/entities/keys';

/** Counter names of an invocation (`Invocation.counters`). */
export type Counter =
  | 'calls' // DynamoDB HTTP requests (round trips)
  | 'capacity' // DynamoDB capacity units as DynamoDB Local reports them (the round-trip table)
  | 'read_units' // as AWS bills them
  | 'write_units'
  | 'refused_writes' // conditional writes DynamoDB refused: billed 1 unit each on AWS, reported 0 locally
  | 'tx_index_units' // index units of transactions DynamoDB Local doubles and AWS does not (taken off write_units)
  | 'sqs'
  | 'connections' // @connections POSTs
  | 'websocket_messages' // those posts in 32 KB metering units
  | 's3'
  | 'secrets'
  | 'outbound' // anything else: the webhook POSTs to the bot's server
  | 'positions' // publications positioned: history items put (a channel's stream, lambdas/entities/channel-stream.ts)
  | 'position_write_units' // the write units of a channel's stream (its position item, its history), also in write_units
  | 'position_read_units'; // and its read units (a recovery's Query of the history, a position read again)

/** API Gateway meters WebSocket messages in 32 KB units. */
export const WS_METERING_BYTES = 32 * 1024;
export const wsUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / WS_METERING_BYTES));

const READS = /^(Get|BatchGet|Query|Scan|TransactGet)/;
type Capacity = { CapacityUnits?: number; GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> };

function add(inv: Invocation, counter: Counter, n: number): void {
  inv.counters[counter] = (inv.counters[counter] ?? 0) + n;
}

/** A call of `service` starting now: its span, ended by the caller. */
function startSpan(inv: Invocation, service: string): CallSpan {
  const span: CallSpan = { service, startedAt: performance.now() };
  (inv.spans ??= []).push(span);
  return span;
}
const endSpan = (span: CallSpan | undefined) => {
  if (span && span.endedAt === undefined) span.endedAt = performance.now();
};

/** The local endpoint's port → the AWS service it stands for (from the environment the stack set). */
function servicesByPort(): Map<string, Counter> {
  const map = new Map<string, Counter>();
  const set = (url: string | undefined, counter: Counter) => url && map.set(new URL(url).port, counter);
  set(process.env.SQS_ENDPOINT, 'sqs');
  set(process.env.WS_MANAGEMENT_ENDPOINT, 'connections');
  set(process.env.S3_ENDPOINT, 's3');
  set(process.env.SECRETS_MANAGER_ENDPOINT, 'secrets');
  return map;
}

export interface Meters {
  /** Every invocation that ended since `seen.length = 0`. */
  seen: Invocation[];
  /** While set, every DynamoDB command also goes through it (where its units land, key by key: key-loads.ts). */
  keyLoads?: KeyLoadRecorder;
  uninstall: () => void;
}

/** Installs the counters; `firstEvents` keeps the first event of each function (cold init replays it). */
export async function installMeters(firstEvents: Map<string, unknown>): Promise<Meters> {
  // Imported once the stack has set the environment the module's config reads.
  const { dynamo } = await import('../../lambdas/aws/dynamo');
  const meters: Omit<Meters, 'uninstall'> = { seen: [] };
  const askCapacity: InitializeMiddleware<object, object> = (next) => async (args) => {
    if (!invocations.getStore()) return next(args);
    return next({ ...args, input: { ...(args.input), ReturnConsumedCapacity: 'INDEXES' } });
  };
  dynamo.middlewareStack.add(askCapacity as never, { step: 'initialize', name: 'benchConsumedCapacity' });
  const perRequest: FinalizeRequestMiddleware<object, object> = (next, context) => async (args) => {
    const inv = invocations.getStore();
    if (!inv) return next(args);
    const command = context.commandName ?? '';
    const reads = READS.test(command);
    add(inv, 'calls', 1);
    const span = startSpan(inv, 'dynamodb');
    let result;
    try {
      const recorder = meters.keyLoads;
      result = recorder ? await recorder.around(command, args.input as never, () => next(args)) : await next(args);
    } catch (err) {
      // A refused conditional write: AWS bills it 1 write unit (DynamoDB Local reports nothing).
      if ((err as Error).name === 'ConditionalCheckFailedException') {
        add(inv, 'refused_writes', 1);
        add(inv, 'write_units', 1);
        if (onChannelStream(args.input)) add(inv, 'position_write_units', 1);
      }
      throw err;
    } finally {
      endSpan(span);
    }
    const stream = onChannelStream(args.input);
    if (stream && /^Put/.test(command)) add(inv, 'positions', 1);
    const consumed = (result.output as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
    for (const c of ([] as Capacity[]).concat(consumed ?? [])) {
      const units = c.CapacityUnits ?? 0;
      add(inv, 'capacity', units);
      const index = Object.values(c.GlobalSecondaryIndexes ?? {}).reduce((sum, i) => sum + (i.CapacityUnits ?? 0), 0);
      if (/^TransactWrite/.test(command)) {
        // DynamoDB Local bills a transaction as 2 units per KB of all its items together, and its index
        // writes at that rate too. AWS bills 2 units per KB of each item, and updates an index after the
        // commit at the standard rate.
        add(inv, 'write_units', transactionTableUnits(args.input) + index / 2);
        add(inv, 'tx_index_units', index / 2);
      } else {
        add(inv, reads ? 'read_units' : 'write_units', units);
        if (stream) add(inv, reads ? 'position_read_units' : 'position_write_units', units);
      }
    }
    if (/^BatchGet/.test(command)) add(inv, 'read_units', missingKeyUnits(args.input, result.output));
    return result;
  };
  dynamo.middlewareStack.addRelativeTo(perRequest as never, { relation: 'after', toMiddleware: 'retryMiddleware', name: 'benchRoundTrips' });

  const services = servicesByPort();
  const dynamoPort = new URL(process.env.DYNAMODB_ENDPOINT as string).port;
  // Each request's span, until its response (or error) arrives, in whatever async context that runs.
  const inFlight = new WeakMap<object, CallSpan>();
  const count = (request: object, port: string, method: string, bytes: number) => {
    const inv = invocations.getStore();
    if (!inv || port === dynamoPort) return; // DynamoDB: counted by the middlewares above
    const service = services.get(port) ?? 'outbound';
    add(inv, service, 1);
    inFlight.set(request, startSpan(inv, service));
    if (service === 'connections' && method === 'POST') add(inv, 'websocket_messages', wsUnits(bytes));
  };
  // node:http (the SDK clients), and undici (fetch: the webhook POSTs).
  const onRequest = (message: unknown) => {
    const request = (message as { request: ClientRequest }).request;
    count(request, portOf(request), request.method, Number(request.getHeader('content-length') ?? 0));
  };
  const onFetch = (message: unknown) => {
    const request = (message as { request: { origin: string; method: string } }).request;
    count(request, new URL(request.origin).port || '80', request.method, 0);
  };
  const onAnswer = (message: unknown) => endSpan(inFlight.get((message as { request: object }).request));
  const channels = {
    'http.client.request.start': onRequest,
    'http.client.response.finish': onAnswer,
    'http.client.request.error': onAnswer,
    'undici:request:create': onFetch,
    'undici:request:headers': onAnswer,
    'undici:request:error': onAnswer,
  };
  for (const [name, listener] of Object.entries(channels)) subscribe(name, listener);

  const { seen } = meters;
  const observe = (inv: Invocation) => {
    seen.push(inv);
    if (!firstEvents.has(inv.entry)) firstEvents.set(inv.entry, structuredClone(inv.event));
  };
  invocationObservers.push(observe);
  return Object.assign(meters, {
    uninstall: () => {
      dynamo.middlewareStack.remove('benchConsumedCapacity');
      dynamo.middlewareStack.remove('benchRoundTrips');
      for (const [name, listener] of Object.entries(channels)) unsubscribe(name, listener);
      // Unobserved, invocations run without an async context again (its promise hooks tax every promise of
      // the process, which the later phases would measure; Lambda has none).
      invocationObservers.splice(invocationObservers.indexOf(observe), 1);
      invocations.disable();
    },
  });
}

const HISTORY_PK = keys.channelHistoryPartition('');
const STREAM_SK = keys.channelStream('').sk;
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof (v as AttributeValue | undefined)?.S === 'string' ? (v as { S: string }).S : undefined);

/** Whether a command (as sent: attribute values marshalled) acts on a channel's stream: its position item or its history. */
function onChannelStream(input: unknown): boolean {
  const i = input as { Key?: Record<string, unknown>; Item?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
  const key = i.Key ?? i.Item;
  const pk = text(key?.pk ?? i.ExpressionAttributeValues?.[':pk']);
  return pk !== undefined && (pk.startsWith(HISTORY_PK) || text(key?.sk) === STREAM_SK);
}

type BatchGetInput = { RequestItems?: Record<string, { Keys?: unknown[]; ConsistentRead?: boolean }> };
type BatchGetOutput = { Responses?: Record<string, unknown[]>; UnprocessedKeys?: Record<string, { Keys?: unknown[] }> };

/**
 * A key a BatchGetItem finds no item at: AWS bills it as the read of an empty item, as it bills a GetItem that
 * finds nothing (1 unit strongly consistent, 0.5 eventually); DynamoDB Local reports nothing for it.
 */
function missingKeyUnits(input: BatchGetInput, output: BatchGetOutput): number {
  let units = 0;
  for (const [table, asked] of Object.entries(input.RequestItems ?? {})) {
    const missing = (asked.Keys?.length ?? 0) - (output.Responses?.[table]?.length ?? 0) - (output.UnprocessedKeys?.[table]?.Keys?.length ?? 0);
    units += missing * (asked.ConsistentRead ? 1 : 0.5);
  }
  return units;
}

type TransactInput = { TransactItems?: { Put?: { Item: Record<string, AttributeValue> }; Update?: object; Delete?: object; ConditionCheck?: object }[] };

/**
 * A transaction's table units as AWS bills them: 2 per KB of each item written (a Put's item as sent; an
 * updated or deleted item counted as one KB: the chats, counters and keys our transactions update are
 * smaller), and 2 for a condition check (a transactional read of an item under 4 KB, counted with the writes).
 */
function transactionTableUnits(input: TransactInput): number {
  return (input.TransactItems ?? []).reduce((n, a) => n + 2 * (a.Put ? Math.max(1, Math.ceil(itemBytes(a.Put.Item) / 1024)) : 1), 0);
}

/** The port a request goes to, from its Host header (its socket may not be connected yet when the channel fires). */
export function portOf(request: ClientRequest): string {
  const host = String(request.getHeader('host') ?? request.host ?? '');
  return host.includes(':') ? (host.split(':').pop() as string) : '80';
}
