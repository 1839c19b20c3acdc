// The signed calls made without SDK clients: a stand-in for Secrets Manager and DynamoDB (AWS itself is the only
// thing replaced) checks what goes on the wire (signed, marshalled) and what comes back (unmarshalled, errors by
// type, throttling retried); the presigned URL is the one the
// SDK's own S3 presigner makes. (Signed PUTs and presigned GETs against the S3 emulator, which checks
// signatures as S3 does, are in test/e2e/files.test.ts.)
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { SourceData } from '@smithy/types';

/** The checksum the SDK's signers take, written here on its own (not the module's). */
class Sha256 {
  private h: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.h = secret ? createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret as Uint8Array)) : createHash('sha256');
  }
  update(d: Uint8Array) {
    this.h.update(d);
  }
  async digest() {
    return new Uint8Array(this.h.digest());
  }
  reset() {}
}

const received: { req: IncomingMessage; body: string }[] = [];
let answer: { status: number; body: unknown } = { status: 200, body: {} };
/** Answers given once each, in order, before `answer`. */
const nextAnswers: { status: number; body: unknown }[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    received.push({ req, body });
    const a = nextAnswers.shift() ?? answer;
    res.writeHead(a.status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(a.body));
  });
});

let awsHttp: typeof import('../../lambdas/core/aws-http');
let aws: typeof import('../../lambdas/core/aws');
let http: typeof import('../../lambdas/core/http');
let queue: typeof import('../../lambdas/core/queue');
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.env.SECRETS_MANAGER_ENDPOINT = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  process.env.DYNAMODB_ENDPOINT = process.env.SECRETS_MANAGER_ENDPOINT;
  process.env.SQS_ENDPOINT = process.env.SECRETS_MANAGER_ENDPOINT;
  process.env.TABLE_NAME = 'the-table';
  process.env.AWS_REGION = 'eu-west-1';
  process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
  process.env.AWS_SESSION_TOKEN = 'session-token';
  awsHttp = await import('../../lambdas/core/aws-http');
  queue = await import('../../lambdas/core/queue');
  aws = await import('../../lambdas/core/aws');
  http = await import('../../lambdas/core/http');
});
afterAll(() => new Promise((r) => server.close(r)));

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };

test('GetSecretValue: a JSON 1.1 POST signed for secretsmanager in the region, with the session token', async () => {
  answer = { status: 200, body: { ARN: 'arn:x', SecretString: 's3cr3t-value' } };
  received.length = 0;
  await expect(awsHttp.getSecretValue('arn:aws:secretsmanager:eu-west-1:1:secret:jwt')).resolves.toBe('s3cr3t-value');
  const [{ req, body }] = received;
  expect(req.method).toBe('POST');
  expect(JSON.parse(body)).toEqual({ SecretId: 'arn:aws:secretsmanager:eu-west-1:1:secret:jwt' });
  expect(req.headers['x-amz-target']).toBe('secretsmanager.GetSecretValue');
  expect(req.headers['content-type']).toBe('application/x-amz-json-1.1');
  expect(req.headers['x-amz-security-token']).toBe('session-token');
  const auth = String(req.headers.authorization);
  expect(auth).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/);

  expect(await resignedBySdk('secretsmanager', req, body)).toBe(auth);
});

/**
 * The module signs without the SDK's signer: re-sign what arrived with AWS's own signer (@smithy/signature-v4:
 * headers and body as received, at the time the request claims). Equal signatures mean the module signs as the
 * SDK does and nothing signed was changed or dropped on the way.
 */
async function resignedBySdk(service: string, req: IncomingMessage, body: string): Promise<string> {
  const auth = String(req.headers.authorization);
  const signedNames = auth.match(/SignedHeaders=([^,]+)/)![1].split(';');
  const headers = Object.fromEntries(signedNames.map((h) => [h, String(req.headers[h])]));
  const amzDate = String(req.headers['x-amz-date']);
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const resigned = await new SignatureV4({ service, region: 'eu-west-1', credentials, sha256: Sha256, uriEscapePath: service !== 's3', applyChecksum: false }).sign(
    { method: req.method ?? 'GET', protocol: 'http:', hostname: '127.0.0.1', path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body },
    { signingDate },
  );
  return resigned.headers.authorization;
}

test('S3 PUT and @connections POST are signed as the SDK signs them (escaped keys, ids, header values)', async () => {
  answer = { status: 200, body: {} };
  const base = process.env.SECRETS_MANAGER_ENDPOINT as string;
  const cases: [service: 's3' | 'execute-api', url: URL, headers: Record<string, string>, body: string][] = [
    // An S3 key is escaped once by the caller and signed as sent.
    ['s3', new URL(`${base}bots/b1/files/${awsHttp.uriEscape("f (1)'*.png")}`), { 'content-type': 'image/png', 'content-disposition': `inline;  filename*=UTF-8''f%20(1).png` }, 'bytes'],
    // A connection id (base64: = + /) is escaped in the URL and escaped again in the signature.
    ['execute-api', new URL(`${base}prod/@connections/${awsHttp.uriEscape('L0S+M9c/OFvHcCIhw=')}`), {}, '{"push":{}}'],
  ];
  for (const [service, url, headers, body] of cases) {
    received.length = 0;
    const res = await awsHttp.signedFetch(service, 'POST', url, headers, body);
    expect(res.status).toBe(200);
    const [{ req, body: arrived }] = received;
    expect(arrived).toBe(body);
    expect(req.url).toBe(url.pathname);
    expect(req.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\\d{8}/eu-west-1/${service}/aws4_request, `));
    expect(await resignedBySdk(service, req, arrived)).toBe(req.headers.authorization);
  }
});

test('GetSecretValue refused (e.g. AccessDenied) → an error naming the status and type, not a key', async () => {
  answer = { status: 400, body: { __type: 'AccessDeniedException', message: 'not allowed' } };
  await expect(awsHttp.getSecretValue('arn:x')).rejects.toThrow(/answered 400: AccessDeniedException not allowed/);
});

test('Secrets Manager down → an unavailable error (503 to clients) after three attempts', async () => {
  answer = { status: 503, body: { __type: 'ServiceUnavailable' } };
  received.length = 0;
  const err = await awsHttp.getSecretValue('arn:x').catch((e) => e);
  expect(err.name).toBe('ServiceUnavailable');
  expect(received).toHaveLength(3);
});

test('a presigned S3 GET is the URL the SDK S3 presigner makes for the same request and time', async () => {
  const signingDate = new Date('2026-11-21T10:00:00Z');
  const url = new URL('https://files-bucket.s3.eu-west-1.amazonaws.com/bots/b1/users/u1/files/f%20(1)');
  const ours = await awsHttp.presign('s3', 'GET', url, 3600, signingDate);
  const sdk = await new S3RequestPresigner({ credentials, region: 'eu-west-1', sha256: Sha256 }).presign(
    { method: 'GET', protocol: 'https:', hostname: url.hostname, path: url.pathname, query: {}, headers: { host: url.hostname } } as never,
    { expiresIn: 3600, signingDate },
  );
  const q = new URL(ours).searchParams;
  expect(q.get('X-Amz-Signature')).toBe(sdk.query!['X-Amz-Signature']);
  expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20261121/eu-west-1/s3/aws4_request');
  expect(q.get('X-Amz-Expires')).toBe('3600');
  expect(q.get('X-Amz-Security-Token')).toBe('session-token');
  expect(ours.startsWith('https://files-bucket.s3.eu-west-1.amazonaws.com/bots/b1/users/u1/files/f%20(1)?')).toBe(true);
});

// DynamoDB's JSON API (the stand-in answers as DynamoDB does; the real one is behind every e2e test).
describe('DynamoDB client', () => {
  const ddbError = (type: string, extra: object = {}) => ({ status: 400, body: { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message: `${type} says no`, ...extra } });

  test('a transaction goes out marshalled, as a JSON 1.0 POST signed for dynamodb', async () => {
    answer = { status: 200, body: {} };
    received.length = 0;
    await aws.dynamo().send(
      new aws.TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: 'the-table', Item: { pk: 'A', n: 1, gone: undefined, tags: new Set(['x']) }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Update: { TableName: 'the-table', Key: { pk: 'B', sk: 'C' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': { deep: [true, null] } } } },
        ],
      }),
    );
    const [{ req, body }] = received;
    expect(req.headers['x-amz-target']).toBe('DynamoDB_20120810.TransactWriteItems');
    expect(req.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(JSON.parse(body)).toEqual({
      TransactItems: [
        { Put: { TableName: 'the-table', Item: { pk: { S: 'A' }, n: { N: '1' }, tags: { SS: ['x'] } }, ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Update: {
            TableName: 'the-table',
            Key: { pk: { S: 'B' }, sk: { S: 'C' } },
            UpdateExpression: 'SET v = :v',
            ExpressionAttributeValues: { ':v': { M: { deep: { L: [{ BOOL: true }, { NULL: true }] } } } },
          },
        },
      ],
    });
    expect(await resignedBySdk('dynamodb', req, body)).toBe(String(req.headers.authorization));
  });

  test('replies come back unmarshalled (Item, Items, LastEvaluatedKey, batch Responses and UnprocessedKeys); a raw Query stays as sent', async () => {
    answer = { status: 200, body: { Items: [{ pk: { S: 'A' }, n: { N: '2' } }], LastEvaluatedKey: { pk: { S: 'A' }, sk: { S: 'Z' } }, Count: 1 } };
    const q = await aws.dynamo().send(new aws.QueryCommand({ TableName: 'the-table', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': 'A' } }));
    expect(q).toMatchObject({ Items: [{ pk: 'A', n: 2 }], LastEvaluatedKey: { pk: 'A', sk: 'Z' }, Count: 1 });
    const raw = await aws.dynamo().send(new aws.RawQueryCommand({ TableName: 'the-table', KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'A' } } }));
    expect(raw.Items).toEqual([{ pk: { S: 'A' }, n: { N: '2' } }]);
    answer = { status: 200, body: { Responses: { 'the-table': [{ pk: { S: 'B' } }] }, UnprocessedKeys: { 'the-table': { Keys: [{ pk: { S: 'C' } }] } } } };
    received.length = 0;
    const b = await aws.dynamo().send(new aws.BatchGetCommand({ RequestItems: { 'the-table': { Keys: [{ pk: 'B' }, { pk: 'C' }] } } }));
    expect(JSON.parse(received[0].body)).toEqual({ RequestItems: { 'the-table': { Keys: [{ pk: { S: 'B' } }, { pk: { S: 'C' } }] } } });
    expect(b.Responses).toEqual({ 'the-table': [{ pk: 'B' }] });
    expect(b.UnprocessedKeys).toEqual({ 'the-table': { Keys: [{ pk: 'C' }] } });
  });

  test("DynamoDB's errors keep their type as name; a cancelled transaction's reasons come with their items unmarshalled", async () => {
    nextAnswers.push(ddbError('ConditionalCheckFailedException'));
    const failed = await aws.dynamo().send(new aws.GetCommand({ TableName: 'the-table', Key: { pk: 'A' } })).catch((e: unknown) => e);
    expect(aws.isDynamoError(failed, 'ConditionalCheckFailedException')).toBe(true);
    expect((failed as Error).message).toBe('ConditionalCheckFailedException says no');
    nextAnswers.push(ddbError('TransactionCanceledException', { CancellationReasons: [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { pk: { S: 'A' }, n: { N: '3' } } }] }));
    const cancelled = await aws.dynamo().send(new aws.TransactWriteCommand({ TransactItems: [] })).catch((e: unknown) => e);
    expect(aws.isDynamoError(cancelled, 'TransactionCanceledException')).toBe(true);
    expect((cancelled as InstanceType<typeof aws.DynamoError>).CancellationReasons).toEqual([
      { Code: 'None', Item: undefined },
      { Code: 'ConditionalCheckFailed', Item: { pk: 'A', n: 3 } },
    ]);
    // A validation error is the caller's bug: not retried, and a 500 to the client, never a 503.
    received.length = 0;
    nextAnswers.push(ddbError('ValidationException'));
    const invalid = await aws.dynamo().send(new aws.GetCommand({ TableName: 'the-table', Key: { pk: 'A' } })).catch((e: unknown) => e);
    expect(received).toHaveLength(1);
    expect(http.errorReply(invalid, {}).statusCode).toBe(500);
  });

  test('throttling is retried (three attempts in all); throttled throughout, the client gets a 503', async () => {
    answer = { status: 200, body: { Item: { pk: { S: 'A' } } } };
    received.length = 0;
    nextAnswers.push(ddbError('ThrottlingException'), ddbError('ProvisionedThroughputExceededException'));
    await expect(aws.dynamo().send(new aws.GetCommand({ TableName: 'the-table', Key: { pk: 'A' } }))).resolves.toMatchObject({ Item: { pk: 'A' } });
    expect(received).toHaveLength(3);
    received.length = 0;
    nextAnswers.push(ddbError('ThrottlingException'), ddbError('ThrottlingException'), ddbError('ThrottlingException'));
    const throttled = await aws.dynamo().send(new aws.GetCommand({ TableName: 'the-table', Key: { pk: 'A' } })).catch((e: unknown) => e);
    expect(received).toHaveLength(3);
    expect(aws.isDynamoError(throttled, 'ThrottlingException')).toBe(true);
    const reply = http.errorReply(throttled, {});
    expect(reply.statusCode).toBe(503);
    expect(JSON.parse(String(reply.body))).toEqual({ error: expect.any(String) });
  });
});

test('SQS: SendMessage and SendMessageBatch (10 a call) as JSON 1.0 POSTs signed for sqs; a refusal says why', async () => {
  answer = { status: 200, body: { Successful: [], Failed: [] } };
  received.length = 0;
  await queue.sendToQueue('https://sqs.eu-west-1.amazonaws.com/1/webhooks', { job: 1 }, 5);
  await queue.sendBatchToQueue('https://sqs.eu-west-1.amazonaws.com/1/webhooks', Array.from({ length: 12 }, (_, i) => ({ job: i })));
  expect(received.map((r) => r.req.headers['x-amz-target'])).toEqual(['AmazonSQS.SendMessage', 'AmazonSQS.SendMessageBatch', 'AmazonSQS.SendMessageBatch']);
  expect(JSON.parse(received[0].body)).toEqual({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/webhooks', MessageBody: '{"job":1}', DelaySeconds: 5 });
  expect(JSON.parse(received[2].body).Entries).toEqual([
    { Id: '0', MessageBody: '{"job":10}' },
    { Id: '1', MessageBody: '{"job":11}' },
  ]);
  for (const { req, body } of received) {
    expect(req.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(await resignedBySdk('sqs', req, body)).toBe(String(req.headers.authorization));
  }
  answer = { status: 200, body: { Successful: [], Failed: [{ Id: '0', Message: 'too big' }] } };
  await expect(queue.sendBatchToQueue('https://sqs.eu-west-1.amazonaws.com/1/webhooks', [{}])).rejects.toThrow(/refused 1 of 1 messages: too big/);
  answer = { status: 400, body: { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' } };
  await expect(queue.sendToQueue('https://sqs.eu-west-1.amazonaws.com/1/nope', {})).rejects.toThrow(/400 QueueDoesNotExist: The specified queue does not exist/);
});
