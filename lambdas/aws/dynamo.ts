// The DynamoDB document client (one per container, made at cold start) and the table helpers every store
// module shares: the table's name, paged queries, batch reads, and the condition failures they map to statuses.
import { type AttributeValue, ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, BatchGetCommand, type BatchGetCommandOutput, BatchWriteCommand, type BatchWriteCommandOutput, DynamoDBDocumentClient, QueryCommand, ScanCommand, type ScanCommandInput, type QueryCommandInput, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall, type NativeAttributeValue } from '@aws-sdk/util-dynamodb';
import { config } from '../shared/config';
import type { StreamRecord } from 'aws-lambda';
import { clientOptions } from './options';

export const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({ ...clientOptions(), endpoint: config().dynamodbEndpoint }), {
  // Optional fields are left out of an item rather than refused.
  marshallOptions: { removeUndefinedValues: true },
});

export const tableName = (): string => config().tableName;

/**
 * An item as the document client returns it, its attributes of any type: only an entity's codec reads one
 * (lambdas/entities/*), and decodes it once into that entity's typed item.
 */
export type RawItem = Record<string, NativeAttributeValue>;

/**
 * A codec's view of a raw item: the attributes its entity declares, typed as written, and any other attribute
 * unknown. The one cast from RawItem is made in the codec that takes it (`raw as Stored<…>`).
 */
export type Stored<T> = T & Record<string, unknown>;

/**
 * The attributes a codec copies only when the item has them (an optional attribute stays absent, never
 * `undefined`): `{ ...item-fields, ...optional(item, 'ttl', 'reason') }`.
 */
export function optional<T extends object, K extends keyof T>(item: T, ...names: K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const name of names) if (item[name] !== undefined) picked[name] = item[name];
  return picked;
}

/** Which entity's item a raw item is (its `entity` attribute), to choose the codec that reads it. */
export const entityOf = (raw: RawItem): string | undefined => (typeof raw.entity === 'string' ? raw.entity : undefined);

/**
 * A stream record's image (NewImage or OldImage) as a raw item, for the codec of its entity: the one path from
 * a stream record to an item. The aws-lambda typings declare their own AttributeValue, the same wire shape.
 */
export const streamImage = (image: StreamRecord['NewImage']): RawItem | undefined =>
  image && unmarshall(image as Record<string, AttributeValue>);

/**
 * Whose a stream record is, read off its raw image without decoding it: the user's id for what a user owns (every
 * item the stream consumers handle names it), else its bot's, else its partition key. The consumers' lane
 * (aws/stream-batch.ts): one user's records stay in order, and go aside together.
 */
export function streamOwner(record: { dynamodb?: StreamRecord }): string {
  const image = record.dynamodb?.NewImage ?? record.dynamodb?.OldImage ?? record.dynamodb?.Keys ?? {};
  const user = image.user_id?.S;
  if (user) return `user:${user}`;
  const bot = image.bot_id?.S ?? (image.entity?.S === 'bot' ? image.id?.S : undefined);
  return bot ? `bot:${bot}` : `pk:${image.pk?.S ?? ''}`;
}

/** A stream record's item as it is now, in the stream's wire shape (a record sent on without its image); undefined once deleted. */
export async function currentImage(streamKeys: StreamRecord['Keys']): Promise<StreamRecord['NewImage']> {
  const key = streamImage(streamKeys);
  if (!key) return undefined;
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  return out.Item && (marshall(out.Item, { removeUndefinedValues: true }) as StreamRecord['NewImage']);
}

/** A write's ConditionExpression was not met. */
export const isConditionFailed = (err: unknown): boolean => err instanceof ConditionalCheckFailedException;

/** A conditional write made: true, or false when its ConditionExpression was not met (any other failure throws). */
export async function conditionMet(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (isConditionFailed(err)) return false;
    throw err;
  }
}

/** The item that failed a condition, when the write asked for it (ReturnValuesOnConditionCheckFailure: ALL_OLD). */
export const conditionFailedItem = (err: unknown): RawItem | undefined => {
  const item = (err as ConditionalCheckFailedException).Item;
  return item ? unmarshall(item) : undefined;
};

/** Every page of a Query, following LastEvaluatedKey (a page is at most 1 MB). */
export async function* queryPages(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): AsyncGenerator<QueryCommandOutput> {
  let start: Record<string, unknown> | undefined;
  do {
    const out = await dynamo.send(new QueryCommand({ ...input, TableName: tableName(), ExclusiveStartKey: start }));
    yield out;
    start = out.LastEvaluatedKey;
  } while (start);
}

/** Every item a Query matches, page after page. */
export async function queryAll(input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>): Promise<RawItem[]> {
  const items: RawItem[] = [];
  for await (const out of queryPages(input)) items.push(...(out.Items ?? []));
  return items;
}

/** One page of a Scan of the whole table (strongly consistent), from `start`; `next` absent at the end. */
export async function scanPage(
  input: Omit<ScanCommandInput, 'TableName' | 'ExclusiveStartKey' | 'ConsistentRead'>,
  start?: Record<string, unknown>,
): Promise<{ items: RawItem[]; next?: Record<string, unknown> }> {
  const out = await dynamo.send(new ScanCommand({ ...input, TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: start }));
  return { items: out.Items ?? [], next: out.LastEvaluatedKey };
}

/** The most keys one BatchGetItem takes. */
const BATCH_GET_MAX = 100;

/**
 * The items at these keys (missing ones are simply absent), 100 keys per BatchGetItem; keys DynamoDB leaves
 * unprocessed under load are asked for again (rare, bounded), and still unprocessed it throws (never a silent gap).
 */
export async function batchGet(keys: { pk: string; sk: string }[], consistentRead = false): Promise<RawItem[]> {
  const table = tableName();
  let items: RawItem[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
    let pending: Record<string, unknown>[] | undefined = keys.slice(i, i + BATCH_GET_MAX);
    for (let attempt = 0; pending?.length; attempt++) {
      if (attempt >= 6) throw new Error(`DynamoDB left ${pending.length} keys unprocessed after ${attempt} attempts`);
      const out: BatchGetCommandOutput = await dynamo.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: consistentRead } } }));
      items = items.concat(out.Responses?.[table] ?? []);
      pending = out.UnprocessedKeys?.[table]?.Keys;
    }
  }
  return items;
}

export type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: { pk: string; sk: string } } };

/** The most writes one BatchWriteItem takes. */
export const BATCH_WRITE_MAX = 25;

/**
 * Puts and deletes, 25 per BatchWriteItem; what DynamoDB leaves unprocessed under load is sent again with a
 * growing pause, and still unprocessed after that it throws (the caller's retry repeats the whole, idempotently).
 */
export async function batchWrite(requests: WriteRequest[]): Promise<void> {
  const table = tableName();
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) {
    let pending: WriteRequest[] | undefined = requests.slice(i, i + BATCH_WRITE_MAX);
    for (let attempt = 0; pending?.length; attempt++) {
      if (attempt >= 6) throw new Error(`DynamoDB left ${pending.length} writes unprocessed after ${attempt} attempts`);
      if (attempt) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const out: BatchWriteCommandOutput = await dynamo.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = out.UnprocessedItems?.[table] as WriteRequest[] | undefined;
    }
  }
}
