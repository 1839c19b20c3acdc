// The DynamoDB client, made once per cold start; its endpoint points at DynamoDB Local when configured.
// (S3 and Secrets Manager calls go through aws-http.ts.)
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type BatchGetCommandOutput, DynamoDBDocumentClient, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from './config';

let ddb: DynamoDBDocumentClient | undefined;

/**
 * Bounded waits: a request that cannot reach DynamoDB or S3 fails in seconds (503 to the client) instead of
 * hanging until API Gateway's 30 s limit. Keep-alive sockets are reused across invocations.
 */
export const boundedRequests = () => ({ connectionTimeout: 1000, requestTimeout: config().awsRequestTimeoutMs, throwOnRequestTimeout: true });

export function dynamo(): DynamoDBDocumentClient {
  if (!ddb) {
    const { region, dynamodbEndpoint } = config();
    ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region, endpoint: dynamodbEndpoint, requestHandler: boundedRequests(), maxAttempts: 3 }), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }
  return ddb;
}

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
