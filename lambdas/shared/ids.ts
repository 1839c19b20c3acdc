// Id formats: UUIDs for users, chats and files; numeric, time-ordered, fixed-width strings for messages.
import { randomInt, randomUUID } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MESSAGE_ID_RE = /^[0-9]{19}$/;

export const newUuid = (): string => randomUUID();
export const isUuid = (value: unknown): value is string => typeof value === 'string' && UUID_RE.test(value);
export const isMessageId = (value: unknown): value is string => typeof value === 'string' && MESSAGE_ID_RE.test(value);

/**
 * Code-unit order, the order DynamoDB sorts keys in: ids and ISO timestamps compare as their strings.
 * Not localeCompare: its first call loads ICU's collator, 5–9 ms of every cold start that sorts.
 */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

let lastMessageId = 0n;

/**
 * 19 digits: epoch milliseconds (13) then 6 random digits, so string order is time order and two
 * writers in the same millisecond rarely collide (a collision fails the put's condition and is retried).
 * Strictly increasing within one process.
 */
export function newMessageId(nowMs: number): string {
  let id = BigInt(nowMs) * 1_000_000n + BigInt(randomInt(0, 1_000_000));
  if (id <= lastMessageId) id = lastMessageId + 1n;
  lastMessageId = id;
  return id.toString().padStart(19, '0');
}

/** The lowest message id of a millisecond: every message written at or after `ms` sorts at or above it. */
export const firstMessageIdAt = (ms: number): string => (BigInt(Math.max(0, Math.floor(ms))) * 1_000_000n).toString().padStart(19, '0');
