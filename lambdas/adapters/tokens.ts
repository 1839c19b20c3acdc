// Session tokens: HS256 JWTs signed with a key from Secrets Manager (AWS) or a file (local), strictly verified.
// The key is fetched again every JWT_SECRET_MAX_AGE_SECONDS, so a rotated secret takes over within that time
// (tokens signed with the old one are then refused: the client opens a new session).
import { createSecretKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { config } from '../shared/config';
import { secretString } from '../aws/secrets';
import { isUuid } from '../shared/ids';
import { TtlCache } from '../shared/cache';
import { TokenExpiredError, UnauthenticatedError } from '../shared/errors';

/** Each token kind has its own `typ` header and audience, so one kind is never accepted as another. */
export const TOKEN_KINDS = {
  session: { typ: 'nexus-session+jwt', audience: 'nexus:client' },
  realtime: { typ: 'nexus-realtime+jwt', audience: 'nexus:realtime' },
} as const;
export type TokenKind = keyof typeof TOKEN_KINDS;

const ISSUER = 'nexus';

export interface TokenClaims {
  userId: string;
  botId: string;
  /** The user's external id (session tokens): chats and messages record it for the bot side. */
  externalId?: string;
}

/** Claims of a verified token, with its expiry (seconds since the epoch). */
export interface VerifiedClaims extends TokenClaims {
  exp: number;
}

let fileSecret: Promise<string> | undefined;

async function loadSecret(): Promise<string> {
  const { jwtSecretArn, jwtSecretFile, jwtSecretMaxAgeSeconds } = config();
  if (jwtSecretArn) return secretString(jwtSecretArn, jwtSecretMaxAgeSeconds);
  if (!jwtSecretFile) throw new Error('Set JWT_SECRET_ARN (AWS) or JWT_SECRET_FILE (local)');
  fileSecret ??= readFile(jwtSecretFile, 'utf8').then((s) => s.trim());
  return fileSecret.catch((err) => {
    fileSecret = undefined; // a failed read is tried again by the next request
    throw err;
  });
}

/** The KeyObject of the current secret, made once per secret: given bytes, jose would make one per call. */
let current: { secret: string; key: KeyObject } | undefined;

async function signingKey(): Promise<KeyObject> {
  const secret = await loadSecret();
  if (current?.secret !== secret) {
    if (secret.length < 32) throw new Error('JWT signing secret is missing or shorter than 32 characters');
    // A new secret: what was verified with the old one must be verified again.
    if (current) verified.clear();
    current = { secret, key: createSecretKey(Buffer.from(secret, 'utf8')) };
  }
  return current.key;
}

export async function signToken(kind: TokenKind, claims: TokenClaims, expiresAt: Date): Promise<string> {
  const { typ, audience } = TOKEN_KINDS[kind];
  return new SignJWT({ bot: claims.botId, ...(kind === 'session' && { ext: claims.externalId }) })
    .setProtectedHeader({ alg: 'HS256', typ })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setSubject(claims.userId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(await signingKey());
}

/**
 * Tokens this instance has verified, keyed by kind and the whole token (its signature included): a session's
 * requests after its first skip the HMAC and the JSON work (about 40 µs each); expiry is checked on every use.
 * Only successes are kept, for 5 minutes at most, 2000 of them.
 */
const verified = new TtlCache<{ claims: TokenClaims; exp: number }>(() => 5 * 60_000, 2000);

/** Verifies algorithm, type, issuer, audience, expiry and the claims' shapes; anything else is a 401. */
export async function verifyToken(kind: TokenKind, token: string): Promise<VerifiedClaims> {
  const key = await signingKey();
  const { claims, exp } = await verified.get(`${kind} ${token}`, () => verifySignedToken(kind, token, key));
  // As jose checks it: expired once the current second reaches exp.
  if (exp <= Math.floor(Date.now() / 1000)) throw new TokenExpiredError(`The ${kind} token has expired`);
  return { ...claims, exp };
}

async function verifySignedToken(kind: TokenKind, token: string, key: KeyObject): Promise<{ claims: TokenClaims; exp: number }> {
  const { typ, audience } = TOKEN_KINDS[kind];
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      typ,
      issuer: ISSUER,
      audience,
      requiredClaims: ['exp', 'iat', 'sub', 'bot'],
    });
    if (!isUuid(payload.sub) || !isUuid(payload.bot)) throw new UnauthenticatedError(`Invalid ${kind} token`);
    if (payload.ext !== undefined && typeof payload.ext !== 'string') throw new UnauthenticatedError(`Invalid ${kind} token`);
    return { claims: { userId: payload.sub, botId: payload.bot, externalId: payload.ext }, exp: payload.exp as number };
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new TokenExpiredError(`The ${kind} token has expired`, { cause: err });
    if (err instanceof UnauthenticatedError) throw err;
    if (err instanceof joseErrors.JOSEError) throw new UnauthenticatedError(`Invalid ${kind} token`, { cause: err });
    throw err;
  }
}
