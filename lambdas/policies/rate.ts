// Per-user and per-IP rate limits: fixed one-minute windows counted atomically in DynamoDB. On the write
// paths the counter is one more item of the request's own transaction (no extra round trip).
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import { RateLimitedError } from '../shared/errors';
import { keys } from '../entities/keys';

export type RateName = 'messages' | 'uploads' | 'chats' | 'reads' | 'sessions' | 'socket_commands';

export interface RateLimit {
  name: RateName;
  /** Whose budget: a user id, or an IP for sessions. */
  subject: string;
  perMinute: number;
  /** What this use counts (one by default; a socket's frame counts its commands), at most perMinute. */
  cost?: number;
}

const WINDOW_SECONDS = 60;

/** The counter update for this minute, as a TransactWriteItems entry (undefined when the limit is off). */
export function rateUpdate(limit: RateLimit, nowMs = Date.now()) {
  if (limit.perMinute <= 0) return undefined;
  const window = Math.floor(nowMs / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  const cost = limit.cost ?? 1;
  return {
    TableName: tableName(),
    Key: keys.rateWindow(limit.name, limit.subject, window),
    UpdateExpression: 'SET entity = :entity, #ttl = :ttl ADD n :cost',
    // Room for this use's whole cost.
    ConditionExpression: 'attribute_not_exists(n) OR n <= :room',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':entity': 'rate', ':ttl': window + 2 * WINDOW_SECONDS, ':cost': cost, ':room': limit.perMinute - cost },
  };
}

export function rateLimited(limit: RateLimit, nowMs = Date.now()): RateLimitedError {
  const retryAfter = WINDOW_SECONDS - ((nowMs / 1000) % WINDOW_SECONDS);
  return new RateLimitedError(`Too many ${limit.name}: at most ${limit.perMinute} a minute; retry in ${Math.ceil(retryAfter)} s`, retryAfter);
}

/** A rate check on its own (uploads, sessions): one UpdateItem; 429 with Retry-After when over. */
export async function consumeRate(limit: RateLimit): Promise<void> {
  return consumeRateAt(limit, Date.now());
}

async function consumeRateAt(limit: RateLimit, now: number): Promise<void> {
  const update = rateUpdate(limit, now);
  if (!update) return;
  try {
    await dynamo.send(new UpdateCommand(update));
  } catch (err) {
    if (isConditionFailed(err)) throw rateLimited(limit, now);
    throw err;
  }
}

/** Gives back a request's place in its window (a refusal after the rate check passed): a refused request takes nothing. */
export async function giveBackRate(limit: RateLimit, nowMs: number): Promise<void> {
  const update = rateUpdate(limit, nowMs);
  if (!update) return;
  await dynamo.send(new UpdateCommand({ TableName: update.TableName, Key: update.Key, UpdateExpression: 'ADD n :minus', ConditionExpression: 'attribute_exists(n)', ExpressionAttributeValues: { ':minus': -1 } })).catch((err) => {
    if (!isConditionFailed(err)) throw err;
  });
}

/**
 * An upload's rate check and its storage quota, side by side (one round trip): when either refuses, what the
 * other took is given back. The rate's refusal wins.
 */
export async function consumeRateAnd<T>(limit: RateLimit, other: () => Promise<T>, giveBack: (taken: T) => Promise<void>): Promise<T> {
  const now = Date.now();
  const [rate, taken] = await Promise.allSettled([consumeRateAt(limit, now), other()]);
  if (rate.status === 'fulfilled' && taken.status === 'fulfilled') return taken.value;
  await Promise.all([rate.status === 'fulfilled' && giveBackRate(limit, now), taken.status === 'fulfilled' && giveBack(taken.value)]);
  throw rate.status === 'rejected' ? rate.reason : (taken as PromiseRejectedResult).reason;
}
