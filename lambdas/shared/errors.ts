// The errors every layer throws, named for what happened (a kind), never for a transport: the HTTP mapper
// (lambdas/http/http.ts) and the Centrifuge mapper (lambdas/centrifuge/protocol.ts) each translate them in one place.

export type ErrorKind =
  | 'invalid_input' // malformed, or breaks a limit
  | 'unauthenticated' // no credentials, or ones that never were valid
  | 'token_expired' // credentials that were valid and have expired: get new ones
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'too_large'
  | 'rate_limited'
  | 'unavailable'; // a dependency is down: retry shortly

export abstract class AppError extends Error {
  abstract readonly kind: ErrorKind;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class InvalidInputError extends AppError {
  readonly kind = 'invalid_input';
}

export class UnauthenticatedError extends AppError {
  readonly kind = 'unauthenticated';
  constructor(message = 'Missing or invalid session token', options?: { cause?: unknown }) {
    super(message, options);
  }
}

export class TokenExpiredError extends AppError {
  readonly kind = 'token_expired';
}

export class ForbiddenError extends AppError {
  readonly kind = 'forbidden';
}

export class NotFoundError extends AppError {
  readonly kind = 'not_found';
}

export class ConflictError extends AppError {
  readonly kind = 'conflict';
}

export class TooLargeError extends AppError {
  readonly kind = 'too_large';
}

export class RateLimitedError extends AppError {
  readonly kind = 'rate_limited';
  constructor(
    message: string,
    /** When the caller may try again. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** DynamoDB, S3 or Secrets Manager did not answer in time, or refused for capacity, after the SDK's retries. */
export class UnavailableError extends AppError {
  readonly kind = 'unavailable';
  constructor(message = 'The service is briefly unavailable; please retry', options?: { cause?: unknown }) {
    super(message, options);
  }
}
