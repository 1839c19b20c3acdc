// Creates the table (from the ONE schema CDK also uses) and its TTL when missing.
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { TABLE_SCHEMA } from '../table-schema';

export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<'created' | 'exists'> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return 'exists';
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
        Projection: { ProjectionType: 'ALL' },
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
