// AWS SDK clients, made once per cold start; endpoints point at DynamoDB Local / the S3 emulator when configured.
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { config } from './config';

let ddb: DynamoDBDocumentClient | undefined;
let s3: S3Client | undefined;

export function dynamo(): DynamoDBDocumentClient {
  if (!ddb) {
    const { region, dynamodbEndpoint } = config();
    ddb = DynamoDBDocumentClient.from(new DynamoDBClient({ region, endpoint: dynamodbEndpoint }), {
      marshallOptions: { removeUndefinedValues: true },
    });
  }
  return ddb;
}

export function s3Client(): S3Client {
  if (!s3) {
    const { region, s3Endpoint } = config();
    s3 = new S3Client({
      region,
      endpoint: s3Endpoint,
      forcePathStyle: Boolean(s3Endpoint),
      // The S3 emulator does not speak the newer flexible checksums; AWS does not need them for these calls.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }
  return s3;
}

export const tableName = (): string => config().tableName;
