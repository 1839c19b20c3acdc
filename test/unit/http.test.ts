// The one error mapper: HttpErrors keep their status and message; anything else is a logged 500 without secrets.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { httpHandler } from '../../lambdas/http/http';
import { InvalidInputError, ForbiddenError, NotFoundError, TooLargeError, UnauthenticatedError } from '../../lambdas/shared/errors';

type Reply = Awaited<ReturnType<ReturnType<typeof httpHandler>>>;
/** One JSON log line: the fields the tests read, the rest open. */
type LogLine = { level?: string; message?: string } & Record<string, unknown>;
const logLine = (line: string) => JSON.parse(line) as LogLine;
/** A route handler that fails with `err`. */
const failing = (err: Error) => () => Promise.reject(err);

const event = (authorization: string, body?: string) =>
  ({
    routeKey: 'POST /x',
    headers: { authorization },
    body,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-1' },
  }) as unknown as APIGatewayProxyEventV2;

test.each([
  [new InvalidInputError('bad'), 400],
  [new UnauthenticatedError('who'), 401],
  [new ForbiddenError('no'), 403],
  [new NotFoundError('gone'), 404],
  [new TooLargeError('big'), 413],
])('%s keeps its status and message as {error}', async (err, status) => {
  let res: Reply | undefined;
  await logged(async () => {
    res = await httpHandler(failing(err))(event('Bearer t'));
  });
  expect(res?.statusCode).toBe(status);
  expect(JSON.parse(res?.body as string)).toEqual({ error: err.message });
  expect(res?.headers?.['content-type']).toMatch(/application\/json/);
});

/** The JSON lines a call writes to stdout and stderr (where the logger writes on Lambda). */
async function logged(fn: () => Promise<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await fn();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return lines;
}

test('an unexpected error is a 500 {error}, logged once with its cause, request id and route, never the token or body', async () => {
  let res: Reply | undefined;
  const lines = await logged(async () => {
    res = await httpHandler(failing(new TypeError('boom', { cause: new Error('the socket closed') })))(event('Bearer SECRET-TOKEN-123', '{"password":"hunter2"}'), { awsRequestId: 'lambda-1' });
  });
  expect(res?.statusCode).toBe(500);
  expect(JSON.parse(res?.body as string)).toEqual({ error: 'Internal server error' });
  const entries = lines.map(logLine);
  const errors = entries.filter((e) => e.level === 'ERROR');
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({
    message: 'unhandled error',
    service: 'chat-bot',
    request_id: 'req-1',
    lambda_request_id: 'lambda-1',
    route: 'POST /x',
    error: { name: 'TypeError', message: 'boom', cause: { message: 'the socket closed' } },
  });
  // The access line of the same request says 500.
  expect(entries.filter((e) => e.message === 'request')).toEqual([expect.objectContaining({ level: 'INFO', request_id: 'req-1', status: 500 })]);
  for (const line of lines) {
    expect(line).not.toContain('SECRET-TOKEN-123');
    expect(line).not.toContain('hunter2');
  }
});

test('a client error is not logged as an error: only the access line, with its status', async () => {
  const lines = await logged(() => httpHandler(failing(new NotFoundError('gone')))(event('Bearer t')));
  expect(lines.map(logLine)).toEqual([
    expect.objectContaining({ level: 'INFO', message: 'request', request_id: 'req-1', route: 'POST /x', status: 404, duration_ms: expect.any(Number) }),
  ]);
});

/** An error as the AWS SDK throws it after its retries: a name, and the HTTP status it came with. */
const awsError = (name: string, status?: number, code?: string) => Object.assign(new Error(name), { name, code, $metadata: { httpStatusCode: status } });

test.each([
  ['ValidationException (400)', 500, awsError('ValidationException', 400)],
  ['ValidationException carried by a 5xx', 500, awsError('ValidationException', 500)],
  ['SerializationException', 500, awsError('SerializationException', 400)],
  ['ProvisionedThroughputExceededException', 503, awsError('ProvisionedThroughputExceededException', 400)],
  ['ThrottlingException', 503, awsError('ThrottlingException', 400)],
  ['TimeoutError', 503, awsError('TimeoutError')],
  ['InternalServerError (500)', 503, awsError('InternalServerError', 500)],
  ['ECONNREFUSED', 503, awsError('Error', undefined, 'ECONNREFUSED')],
])('%s → %i; only a dependency that is down says Retry-After; logged once', async (_name, status, err) => {
  let res: Reply | undefined;
  const lines = await logged(async () => {
    res = await httpHandler(failing(err))(event('Bearer t'));
  });
  expect(res?.statusCode).toBe(status);
  expect(res?.headers?.['retry-after']).toBe(status === 503 ? '1' : undefined);
  expect(lines.map(logLine).filter((e) => e.level === 'ERROR')).toHaveLength(1);
});
