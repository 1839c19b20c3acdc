// Creates the table (from the ONE schema CDK also uses) and its TTL when missing; a table of an older version
// (a data folder kept across an upgrade) gets the indexes it lacks.
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../table-schema';

/** `updated`: the table was there but lacked an index, now added and ACTIVE. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<'created' | 'exists' | 'updated'> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    return (await addMissingIndexes(client, tableName, Table)) ? 'updated' : 'exists';
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  const s = TABLE_SCHEMA;
  const attributes = new Map<string, 'S'>();
  for (const k of [s.partitionKey, s.sortKey, ...s.globalSecondaryIndexes.flatMap((g) => [g.partitionKey, g.sortKey])]) {
    attributes.set(k.name, k.type);
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType })),
      KeySchema: [
        { AttributeName: s.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: s.sortKey.name, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: s.globalSecondaryIndexes.map((g) => ({
        IndexName: g.indexName,
        KeySchema: [
          { AttributeName: g.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: g.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: g.projection },
      })),
      StreamSpecification: { StreamEnabled: true, StreamViewType: s.stream },
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: s.ttlAttribute, Enabled: true },
    }),
  );
  return 'created';
}

/** Adds the schema's indexes the table lacks, one at a time (DynamoDB creates one per UpdateTable), each until ACTIVE. */
async function addMissingIndexes(client: DynamoDBClient, tableName: string, table: TableDescription | undefined): Promise<boolean> {
  const have = new Set((table?.GlobalSecondaryIndexes ?? []).map((g) => g.IndexName));
  const missing = TABLE_SCHEMA.globalSecondaryIndexes.filter((g) => !have.has(g.indexName));
  for (const g of missing) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [g.partitionKey, g.sortKey].map((k) => ({ AttributeName: k.name, AttributeType: k.type })),
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: g.indexName,
              KeySchema: [
                { AttributeName: g.partitionKey.name, KeyType: 'HASH' },
                { AttributeName: g.sortKey.name, KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: g.projection },
            },
          },
        ],
      }),
    );
    await untilActive(client, tableName, g.indexName);
  }
  return missing.length > 0;
}

/** Polls the index's status (DynamoDB Local backfills it at once; the wait is short and bounded). */
async function untilActive(client: DynamoDBClient, tableName: string, indexName: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const index = Table?.GlobalSecondaryIndexes?.find((g) => g.IndexName === indexName);
    if (index?.IndexStatus === 'ACTIVE' && Table?.TableStatus === 'ACTIVE') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`index ${indexName} of ${tableName} did not become ACTIVE`);
}
