// The ONE Centrifuge error mapper: what happened (an AppError's kind) → the error code the `centrifuge`
// client acts on (docs/realtime.md), as the HTTP mapper turns kinds into statuses.
import { AppError, type ErrorKind } from '../shared/errors';
import { isUnavailable } from '../aws/failures';

/** Centrifugo error codes the client acts on. */
export const CODES = {
  internal: 100, // < 100 or temporary → the client retries
  unauthorized: 101, // the client stops
  permissionDenied: 103, // the subscription fails, the connection stays
  methodNotFound: 104,
  badRequest: 107,
  tokenExpired: 109, // the client gets a new token and reconnects
  tooManyRequests: 111,
} as const;

/**
 * Centrifuge's Disconnect codes we send (centrifugal/centrifuge disconnect.go): from 3000 to 3499 the
 * `centrifuge` client reconnects, with backoff; from 3500 to 3999 it does not.
 */
export const DISCONNECTS = {
  /** The socket's token expired without a refresh: it reconnects with a new one. */
  tokenExpired: { code: 3005, reason: 'token expired' },
  /** A subscribe that could not finish handing over to live publications: it reconnects, and recovers. */
  insufficientState: { code: 3010, reason: 'insufficient state' },
  /** Too many commands on one socket: it reconnects after its backoff, on a new socket with a new budget. */
  tooManyRequests: { code: 3013, reason: 'too many requests' },
  userErased: { code: 3500, reason: 'user erased' },
  /** One of the user's oldest sockets past MAX_SOCKETS_PER_USER: it stays closed (no tug of war between tabs). */
  connectionLimit: { code: 3504, reason: 'connection limit' },
} as const;
export type Disconnect = (typeof DISCONNECTS)[keyof typeof DISCONNECTS];

/** The Disconnect push frame, sent before the socket is closed (API Gateway closes with no code of ours). */
export const disconnectFrame = (d: Disconnect): Buffer => Buffer.from(JSON.stringify({ push: { disconnect: d } }));

/** Thrown by a command after which its socket is closed: the rest of the frame is not run. */
export class DisconnectError extends Error {
  constructor(readonly disconnect: Disconnect) {
    super(disconnect.reason);
  }
}

export interface ProtocolError {
  code: number;
  message: string;
  temporary?: true;
}

/** Each kind's code and label; `detail` adds the error's own message (never for internals). */
const BY_KIND: Record<ErrorKind, { code: number; label: string; detail: boolean; temporary?: true }> = {
  unauthenticated: { code: CODES.unauthorized, label: 'unauthorized', detail: true },
  token_expired: { code: CODES.tokenExpired, label: 'token expired', detail: false },
  forbidden: { code: CODES.permissionDenied, label: 'permission denied', detail: false },
  not_found: { code: CODES.permissionDenied, label: 'permission denied', detail: false },
  invalid_input: { code: CODES.badRequest, label: 'bad request', detail: true },
  conflict: { code: CODES.badRequest, label: 'bad request', detail: true },
  too_large: { code: CODES.badRequest, label: 'bad request', detail: true },
  rate_limited: { code: CODES.tooManyRequests, label: 'too many requests', detail: false, temporary: true },
  unavailable: { code: CODES.internal, label: 'internal error', detail: false, temporary: true },
};

/**
 * The protocol error for a failed command: an AppError by its kind, a dependency down as a temporary internal
 * error (the client retries with backoff). Anything else is a bug: rethrown for the caller to log.
 */
export function protocolError(err: unknown): ProtocolError {
  const kind: ErrorKind | undefined = err instanceof AppError ? err.kind : isUnavailable(err) ? 'unavailable' : undefined;
  if (!kind) throw err;
  const { code, label, detail, temporary } = BY_KIND[kind];
  return { code, message: detail && err instanceof AppError ? `${label}: ${err.message}` : label, ...(temporary && { temporary }) };
}
