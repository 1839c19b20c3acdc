// The one error mapper: HttpErrors keep their status and message; anything else is a logged 500 without secrets.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { httpHandler } from '../../lambdas/core/http';
import { BadRequestError, ForbiddenError, NotFoundError, PayloadTooLargeError, UnauthorizedError } from '../../lambdas/core/errors';

const event = (authorization: string, body?: string) =>
  ({
    routeKey: 'POST /x',
    headers: { authorization },
    body,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-1' },
  }) as unknown as APIGatewayProxyEventV2;

test.each([
  [new BadRequestError('bad'), 400],
  [new UnauthorizedError('who'), 401],
  [new ForbiddenError('no'), 403],
  [new NotFoundError('gone'), 404],
  [new PayloadTooLargeError('big'), 413],
])('%s keeps its status and message as {error}', async (err, status) => {
  const res = await httpHandler(async () => {
    throw err;
  })(event('Bearer t'));
  expect(res.statusCode).toBe(status);
  expect(JSON.parse(res.body as string)).toEqual({ error: err.message });
  expect(res.headers?.['content-type']).toMatch(/application\/json/);
});

test('an unexpected error is a 500 {error} and one log line with request id and route, never the token or body', async () => {
  const lines: string[] = [];
  const spy = jest.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
  try {
    const res = await httpHandler(async () => {
      throw new TypeError('boom');
    })(event('Bearer SECRET-TOKEN-123', '{"password":"hunter2"}'));
    expect(res.statusCode).toBe(500);
    expect(JSON.parse(res.body as string)).toEqual({ error: 'Internal server error' });
    expect(lines).toHaveLength(1);
    const logged = JSON.parse(lines[0]);
    expect(logged).toMatchObject({ level: 'error', request_id: 'req-1', route: 'POST /x', error: { name: 'TypeError', message: 'boom' } });
    expect(lines[0]).not.toContain('SECRET-TOKEN-123');
    expect(lines[0]).not.toContain('hunter2');
  } finally {
    spy.mockRestore();
  }
});
