// Files a message attaches, from its stream record: each is marked sent and kept as its bot's retention says
// (none when off), no longer as an unsent upload; a client upload's bytes go back to its user's storage quota.
import { transactWrite } from '../aws/transact';
import type { StoredFile } from '../entities/files';
import { markSent, sentUpdate } from '../entities/file-writes';
import type { MessageItem } from '../entities/messages';
import { expiryOf, type Retained } from '../policies/retention';
import { releaseItem } from '../policies/storage-quota';

/**
 * Every uploaded file of the message, in parallel. Handled once however often the record comes: the first
 * send of a counted file sets `sent_at` and gives its bytes back in one transaction conditioned on `sent_at`
 * being absent; after that, only a later message moves `sent_at` (and the ttl) on.
 */
export async function keepSentFiles(message: MessageItem, bot: Retained): Promise<void> {
  const ttl = expiryOf(bot, Date.parse(message.created_at));
  await Promise.all((message.files ?? []).filter((f): f is StoredFile & { id: string } => Boolean(f.id)).map((f) => keepSentFile(f, message.user_id, message.created_at, ttl)));
}

async function keepSentFile(f: StoredFile & { id: string }, userId: string, sentAt: string, ttl: number | undefined): Promise<void> {
  if (f.counted) {
    // Sent before (a redelivered record), gone (expired: its REMOVE gives the bytes back), or its user erased.
    if ((await transactWrite([{ Update: sentUpdate(f.id, sentAt, ttl, true) }, releaseItem(userId, f.size ?? 0)])) < 0) return;
  }
  // Gone, or kept already for this message or a later one: nothing more.
  await markSent(f.id, sentAt, ttl);
}
