// The two error mappers, HTTP and Centrifuge: every kind of error has one answer on each transport, and the
// realtime client's codes follow the kinds (an expired token is 109 there and 401 over HTTP), with no message
// matching anywhere.
import { errorReply } from '../../lambdas/http/http';
import { CODES, protocolError } from '../../lambdas/centrifuge/errors';
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  RateLimitedError,
  TokenExpiredError,
  TooLargeError,
  UnauthenticatedError,
  UnavailableError,
  type AppError,
} from '../../lambdas/shared/errors';

const cases: [AppError, number, number, boolean][] = [
  [new InvalidInputError('bad'), 400, CODES.badRequest, false],
  [new UnauthenticatedError('who'), 401, CODES.unauthorized, false],
  [new TokenExpiredError('The realtime token has expired'), 401, CODES.tokenExpired, false],
  [new ForbiddenError('no'), 403, CODES.permissionDenied, false],
  [new NotFoundError('gone'), 404, CODES.permissionDenied, false],
  [new ConflictError('again'), 409, CODES.badRequest, false],
  [new TooLargeError('big'), 413, CODES.badRequest, false],
  [new RateLimitedError('slow down', 7), 429, CODES.tooManyRequests, true],
  [new UnavailableError(), 503, CODES.internal, true],
];

test.each(cases)('%s → HTTP %i, Centrifuge code %i (temporary: %s)', (err, status, code, temporary) => {
  // The mapper logs a dependency down (on stderr, as Lambda's logger does): not this test's output.
  const quiet = [jest.spyOn(process.stdout, 'write'), jest.spyOn(process.stderr, 'write')].map((s) => s.mockImplementation(() => true));
  const reply = errorReply(err, {});
  for (const q of quiet) q.mockRestore();
  expect(reply.statusCode).toBe(status);
  expect(JSON.parse(reply.body as string)).toEqual({ error: status === 503 ? 'The service is briefly unavailable; please retry' : err.message });
  expect(reply.headers?.['retry-after']).toBe(status === 429 ? '7' : status === 503 ? '1' : undefined);
  const protocol = protocolError(err);
  expect(protocol.code).toBe(code);
  expect(protocol.temporary === true).toBe(temporary);
});

test('an AWS dependency down is a temporary internal error on the socket; a bug is rethrown for the handler to log', () => {
  const throttled = Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
  expect(protocolError(throttled)).toEqual({ code: CODES.internal, message: 'internal error', temporary: true });
  const bug = new TypeError('undefined is not a function');
  expect(() => protocolError(bug)).toThrow(bug);
});

test('the errors say what happened and keep their cause', () => {
  const cause = new Error('jose: "exp" claim timestamp check failed');
  const err = new TokenExpiredError('The session token has expired', { cause });
  expect([err.kind, err.name, err.cause]).toEqual(['token_expired', 'TokenExpiredError', cause]);
});
