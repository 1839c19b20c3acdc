// The DynamoDB client: DynamoDB's JSON API, signed and sent by aws-http.ts (SigV4, keep-alive sockets, bounded
// waits and retries), items (un)marshalled as the SDK's document client does it (marshallItem, unmarshallItem:
// the common types here, the rest by @aws-sdk/util-dynamodb).
// Not the SDK's client: it added ~190 KB to every bundle, ~35 ms to every cold start and ~1.3 ms of CPU to
// every call (BENCHMARKS.md "Bundles and cold init"). The commands keep the SDK's names, inputs and outputs.
import type {
  BatchGetCommandInput,
  BatchGetCommandOutput,
  DeleteCommandInput,
  DeleteCommandOutput,
  GetCommandInput,
  GetCommandOutput,
  PutCommandInput,
  PutCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  TransactWriteCommandInput,
  TransactWriteCommandOutput,
  UpdateCommandInput,
  UpdateCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import type { AttributeValue, QueryCommandInput as RawQueryInput, QueryCommandOutput as RawQueryOutput } from '@aws-sdk/client-dynamodb';
import { convertToAttr, convertToNative, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { awsJsonCall, retryPause } from './aws-http';
import { THROTTLING_ERRORS } from './errors';
import { config } from './config';

type Operation = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'BatchGetItem' | 'TransactWriteItems';
type Json = Record<string, unknown>;

/** One DynamoDB operation; `raw` ones take and give AttributeValues as they are (no document marshalling). */
abstract class Command<I, O> {
  declare readonly output: O;
  constructor(
    readonly operation: Operation,
    readonly input: I,
    readonly raw = false,
  ) {}
}

export class GetCommand extends Command<GetCommandInput, GetCommandOutput> {
  constructor(input: GetCommandInput) {
    super('GetItem', input);
  }
}
export class PutCommand extends Command<PutCommandInput, PutCommandOutput> {
  constructor(input: PutCommandInput) {
    super('PutItem', input);
  }
}
export class UpdateCommand extends Command<UpdateCommandInput, UpdateCommandOutput> {
  constructor(input: UpdateCommandInput) {
    super('UpdateItem', input);
  }
}
export class DeleteCommand extends Command<DeleteCommandInput, DeleteCommandOutput> {
  constructor(input: DeleteCommandInput) {
    super('DeleteItem', input);
  }
}
export class QueryCommand extends Command<QueryCommandInput, QueryCommandOutput> {
  constructor(input: QueryCommandInput) {
    super('Query', input);
  }
}
export class BatchGetCommand extends Command<BatchGetCommandInput, BatchGetCommandOutput> {
  constructor(input: BatchGetCommandInput) {
    super('BatchGetItem', input);
  }
}
export class TransactWriteCommand extends Command<TransactWriteCommandInput, TransactWriteCommandOutput> {
  constructor(input: TransactWriteCommandInput) {
    super('TransactWriteItems', input);
  }
}
/** A Query whose items stay AttributeValues: a fan-out's ids are read by hand, with no unmarshalling. */
export class RawQueryCommand extends Command<RawQueryInput, RawQueryOutput> {
  constructor(input: RawQueryInput) {
    super('Query', input, true);
  }
}

/** DynamoDB's cancellation reason of one transaction item (its Item unmarshalled). */
export interface CancellationReason {
  Code?: string;
  Message?: string;
  Item?: Json;
}

/** An error DynamoDB answered: `name` is its type (ConditionalCheckFailedException, ...), as the SDK names it. */
export class DynamoError extends Error {
  readonly $metadata: { httpStatusCode: number };
  constructor(
    override readonly name: string,
    message: string,
    status: number,
    readonly CancellationReasons?: CancellationReason[],
  ) {
    super(message);
    this.$metadata = { httpStatusCode: status };
  }
}

export const isDynamoError = (err: unknown, name: string): err is DynamoError => err instanceof DynamoError && err.name === name;

/** Worth another attempt: DynamoDB asks the caller to slow down (5xx and network failures are retried below it). */
const THROTTLED = new Set(THROTTLING_ERRORS);

/** The wire: one operation's JSON body to DynamoDB's JSON reply. */
export type Send = (operation: Operation, body: Json) => Promise<Json>;

/** Wrappers of every call on the wire, applied in order (the benchmark counts round trips and capacity with one). */
export const dynamoMiddleware: ((next: Send) => Send)[] = [];

/** One operation on the wire: signed, bounded and retried by aws-http; throttling retried here, twice at most. */
export const sendToDynamo: Send = async (operation, body) => {
  for (let attempt = 1; ; attempt++) {
    const { status, doc, error } = await awsJsonCall('dynamodb', config().dynamodbEndpoint, '1.0', `DynamoDB_20120810.${operation}`, body);
    if (!error) return doc;
    if (attempt >= 3 || !THROTTLED.has(error.type)) {
      const reasons = (error.doc.CancellationReasons as { Code?: string; Message?: string; Item?: Record<string, AttributeValue> }[] | undefined)?.map((r) => ({
        ...r,
        Item: r.Item ? unmarshallItem(r.Item) : undefined,
      }));
      throw new DynamoError(error.type, error.message || `DynamoDB answered ${status}`, status, reasons);
    }
    await retryPause(attempt);
  }
};

const MARSHALL = { removeUndefinedValues: true };
/** Document attributes of a request, wherever the operations put them (transaction items, batch keys). */
const ITEM_KEYS = new Set(['Key', 'Item', 'ExpressionAttributeValues', 'ExclusiveStartKey']);

/**
 * A document as DynamoDB's attributes: util-dynamodb's marshall (undefined values removed), with strings,
 * numbers, booleans, null, lists and plain objects done here, skipping its chain of type checks per value;
 * anything else (sets, binary, numbers it refuses) goes to util-dynamodb. The reverse of unmarshallItem.
 */
export function marshallItem(doc: Record<string, unknown>): Record<string, AttributeValue> {
  const attrs: Record<string, AttributeValue> = {};
  for (const name in doc) {
    const value = doc[name];
    if (value !== undefined && typeof value !== 'function') attrs[name] = toAttr(value);
  }
  return attrs;
}

function toAttr(value: unknown): AttributeValue {
  switch (typeof value) {
    case 'string':
      return { S: value };
    case 'boolean':
      return { BOOL: value };
    case 'number':
      if (Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER) return { N: String(value) };
      break;
    case 'object':
      if (value === null) return { NULL: true };
      if (Array.isArray(value)) return { L: value.filter((v) => v !== undefined && typeof v !== 'function').map(toAttr) };
      if (Object.getPrototypeOf(value) === Object.prototype) return { M: marshallItem(value as Record<string, unknown>) };
  }
  return convertToAttr(value, MARSHALL);
}

function marshallInput(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(marshallInput);
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    if (ITEM_KEYS.has(k)) out[k] = marshallItem(v as Json);
    else if (k === 'Keys') out[k] = (v as Json[]).map(marshallItem);
    else out[k] = marshallInput(v);
  }
  return out;
}

/**
 * An item (or a stream record's image) as the document client gives it: util-dynamodb's unmarshall. The common
 * types are read here, with no Object.entries per attribute as util-dynamodb does (a page of ten chats: about
 * 40 µs there, under 20 here); sets, binary and numbers beyond 2^53 go to util-dynamodb, which makes them.
 */
export function unmarshallItem(item: unknown): Record<string, NativeAttributeValue> {
  const attrs = item as Record<string, AttributeValue>;
  const doc: Record<string, NativeAttributeValue> = {};
  for (const name in attrs) doc[name] = toNative(attrs[name]);
  return doc;
}

function toNative(value: AttributeValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) {
    const n = Number(value.N);
    if (Math.abs(n) <= Number.MAX_SAFE_INTEGER) return n;
  } else if (value.M !== undefined) return unmarshallItem(value.M);
  else if (value.L !== undefined) return value.L.map(toNative);
  else if (value.BOOL !== undefined) return value.BOOL;
  else if (value.NULL !== undefined) return null;
  return convertToNative(value);
}

function unmarshallOutput(out: Json): Json {
  const doc: Json = { ...out };
  for (const k of ['Item', 'Attributes', 'LastEvaluatedKey']) if (out[k]) doc[k] = unmarshallItem(out[k]);
  if (Array.isArray(out.Items)) doc.Items = out.Items.map(unmarshallItem);
  if (out.Responses) doc.Responses = Object.fromEntries(Object.entries(out.Responses as Record<string, unknown[]>).map(([t, items]) => [t, items.map(unmarshallItem)]));
  if (out.UnprocessedKeys) {
    const pending = out.UnprocessedKeys as Record<string, { Keys?: unknown[] }>;
    doc.UnprocessedKeys = Object.fromEntries(Object.entries(pending).map(([t, v]) => [t, { ...v, Keys: v.Keys?.map(unmarshallItem) }]));
  }
  return doc;
}

export interface DynamoClient {
  send<I, O>(command: Command<I, O>): Promise<O>;
}

const client: DynamoClient = {
  async send<I, O>(command: Command<I, O>): Promise<O> {
    const wire = dynamoMiddleware.length ? dynamoMiddleware.reduce<Send>((next, wrap) => wrap(next), sendToDynamo) : sendToDynamo;
    const body = (command.raw ? command.input : marshallInput(command.input)) as Json;
    const out = await wire(command.operation, body);
    return { ...(command.raw ? out : unmarshallOutput(out)), $metadata: {} } as O;
  },
};

export const dynamo = (): DynamoClient => client;

export const tableName = (): string => config().tableName;

/** Every item a Query matches, following LastEvaluatedKey (a page is at most 1 MB). */
export async function queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo().send(new QueryCommand({ ...input, TableName: tableName(), ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * The items at these keys (missing ones are simply absent), in one BatchGetItem; keys DynamoDB leaves
 * unprocessed under load are asked for again (rare, bounded).
 */
export async function batchGet(keys: { pk: string; sk: string }[], consistentRead = false): Promise<Record<string, unknown>[]> {
  if (keys.length === 0) return [];
  const table = tableName();
  let items: Record<string, unknown>[] = [];
  let pending: Record<string, unknown>[] | undefined = keys;
  for (let attempt = 0; pending?.length && attempt < 6; attempt++) {
    const out: BatchGetCommandOutput = await dynamo().send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: consistentRead } } }));
    items = items.concat(out.Responses?.[table] ?? []);
    pending = out.UnprocessedKeys?.[table]?.Keys;
  }
  return items;
}
