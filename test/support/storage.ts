// The whole table and the whole bucket of the running local stack, read with the SDK's own clients (not the
// code under test): what a test that proves nothing was left behind scans.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

const sdkDynamo = () => DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT, region: process.env.AWS_REGION }));

/** Every item of the table, as JSON text per item (read with the SDK's own client, not the code under test). */
export async function scanTable(): Promise<string[]> {
  const ddb = sdkDynamo();
  const items: string[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb.send(new ScanCommand({ TableName: process.env.TABLE_NAME, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []).map((i) => JSON.stringify(i)));
    start = out.LastEvaluatedKey;
  } while (start);
  ddb.destroy();
  return items;
}

export async function listBucket(): Promise<string[]> {
  const s3 = new S3Client({ endpoint: process.env.S3_ENDPOINT, region: process.env.AWS_REGION, forcePathStyle: true });
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const out = await s3.send(new ListObjectsV2Command({ Bucket: process.env.BUCKET_NAME, ContinuationToken: token }));
    keys.push(...(out.Contents ?? []).map((o) => o.Key as string));
    token = out.IsTruncated ? out.NextContinuationToken : undefined;
  } while (token);
  s3.destroy();
  return keys;
}

