// Idempotency keys of sends (client_message_id / Idempotency-Key): a claim item per chat side and key, kept
// 24 h by TTL, holding the message it stands for, so that a retry finds the first send's message, or finishes
// a send that stopped between its claim and its put.
import { ConflictError } from '../shared/errors';
import { keys, type Key } from '../entities/keys';
import { readMessage, type MessageItem } from '../entities/messages';
import { deleteClaim, putClaim } from '../entities/idempotency-claims';

const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export const idempotencyKey = (chatId: string, side: 'user' | 'bot', key: string): Key => keys.idempotency(chatId, side, key);

/**
 * Claims `key` for `item`. Undefined: claimed, go on and put the message. Otherwise the earlier send's result:
 * its message, or (when it stopped before its put) the claimed message, put now by `put`. A key already used
 * for a different message is a 409.
 */
export async function claimKey(
  key: Key,
  item: MessageItem,
  fingerprint: string,
  now: number,
  put: (m: MessageItem) => Promise<boolean>,
): Promise<{ item: MessageItem; created: boolean } | undefined> {
  const nowSeconds = Math.floor(now / 1000);
  const old = await putClaim(key, { message_id: item.id, fingerprint, message: item, ttl: nowSeconds + IDEMPOTENCY_TTL_SECONDS }, nowSeconds);
  // Claimed; or our own claim, its reply lost and the put retried by the SDK.
  if (!old || old.message_id === item.id) return undefined;
  if (old.fingerprint !== fingerprint) throw new ConflictError('This idempotency key was already used for a different message in this chat');
  // The claim holds the message it stands for.
  const claimed = old.message;
  const found = await readMessage(claimed.user_id, claimed.chat_id, claimed.id);
  if (found) return { item: found, created: false };
  // The first send is still writing, or stopped: its message either way (the first send answers 201).
  await put(claimed);
  return { item: claimed, created: false };
}

/** Gives a claim back (the send was refused after it, e.g. rate limited): a refused send leaves nothing. */
export function releaseKey(key: Key, messageId: string): Promise<void> {
  return deleteClaim(key, messageId);
}
