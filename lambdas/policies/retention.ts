// A bot's retention (`retention_days`, off by default): its messages and files are kept that long after they
// were written. Each carries `ttl`, so DynamoDB deletes it (and a removed file record has its object deleted,
// bot/webhook-dispatch.ts), and every read hides what the bot's current setting puts out of date, whether or
// not TTL has deleted it yet (DynamoDB may take days). A change of the setting re-dates what is stored
// (flows/retention-task.ts).
import { config } from '../shared/config';
import { InvalidInputError } from '../shared/errors';
import { firstMessageIdAt } from '../shared/ids';
import { keys } from '../entities/keys';
import { SIDES } from '../entities/chat-activity';
import type { ChatItem } from '../entities/chats';
import { sideMessageDates } from '../entities/messages';
import { isPastTtl } from '../entities/expiry';

export const MAX_RETENTION_DAYS = 3650;

/** What retention reads of a bot. */
export interface Retained {
  retention_days?: number;
}

export function checkRetention(days: number | null | undefined): void {
  if (days === undefined || days === null) return;
  if (!(Number.isInteger(days) && days >= 1 && days <= MAX_RETENTION_DAYS)) {
    throw new InvalidInputError(`retention_days must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or off: ${days}`);
  }
}

/** How long the bot keeps a message or file, in seconds; undefined: for ever. */
const keptSeconds = (bot: Retained): number | undefined => (bot.retention_days ? bot.retention_days * config().retentionDaySeconds : undefined);

/**
 * The `ttl` (epoch seconds) of a message or file the bot writes at `createdMs`; undefined: kept for ever.
 * Rounded up: reads hide an item by its created_at first (retentionWindow), never earlier by its ttl.
 */
export function expiryOf(bot: Retained, createdMs: number): number | undefined {
  const seconds = keptSeconds(bot);
  return seconds === undefined ? undefined : Math.ceil(createdMs / 1000) + seconds;
}

/** What a read may still return at `nowMs`: nothing past its ttl, nothing created before `since`. */
export interface RetentionWindow {
  nowMs: number;
  /** The oldest `created_at` the bot's setting keeps (ISO); absent: retention off. */
  since?: string;
}

export function retentionWindow(bot: Retained, nowMs = Date.now()): RetentionWindow {
  const seconds = keptSeconds(bot);
  return { nowMs, ...(seconds !== undefined && { since: new Date(nowMs - seconds * 1000).toISOString() }) };
}


/** A message or file a read may return. */
export const isRetained = (item: { created_at?: unknown; ttl?: unknown }, w: RetentionWindow): boolean =>
  !isPastTtl(item, w.nowMs) && (!w.since || (typeof item.created_at === 'string' && item.created_at >= w.since));

/** The lowest message sort key of a chat that the window keeps (a history Query starts there). */
export const retainedFrom = (chatId: string, w: RetentionWindow): string | undefined =>
  w.since ? keys.messagePrefix(chatId) + firstMessageIdAt(Date.parse(w.since)) : undefined;

/** A recount this instance made (retainedUnread): per chat, side and last read. */
interface Recount {
  /** The stored counter it was made for, and how many of the messages after the last read were still kept. */
  stored: number;
  kept: number;
  /** The window's start then, and the latest start at which everything it found kept still is (none kept: none). */
  since: string;
  until?: string;
}

/** Bounded: the first made goes first (a chat asked for again is simply counted again). */
const recounts = new Map<string, Recount>();
const MAX_RECOUNTS = 10_000;

/**
 * One side's unread counter of a chat (its item) as retention leaves it. The counter counts the other side's
 * messages after this side's last read; when that read (or, never read, the chat's creation) is older than the
 * window, some of them may be out of date, so the ones still kept are counted: one Query of the chat's messages
 * from the window's start, e.g. for a bot that never marks chats read. The instance keeps that recount while the
 * stored counter stays as it was (the stream counts each new message into it) and the window has not passed
 * the oldest message it kept: a list asked again meanwhile makes no Query. Never above the stored count.
 */
export async function retainedUnread(chat: ChatItem, side: keyof typeof SIDES, w: RetentionWindow): Promise<number> {
  const { count, read, counts } = SIDES[side];
  const stored = chat[count];
  const from = chat[read] ?? chat.created_at;
  if (!w.since || stored === 0 || from >= w.since) return stored;
  const chatId = chat.id;
  const key = `${chatId} ${side} ${from}`;
  const known = recounts.get(key);
  if (known && known.stored === stored && known.since <= w.since && w.since <= (known.until ?? w.since)) return Math.min(known.kept, stored);
  let kept = 0;
  let oldest: string | undefined;
  // An item of the window past its ttl: a lengthened retention not yet applied to it (its task re-dates it and
  // it counts again), so this recount is not kept.
  let redating = false;
  const low = retainedFrom(chatId, w) ?? keys.chatStart(chat.user_id, chatId).sk;
  for (const item of await sideMessageDates(chat.user_id, chatId, low, counts)) {
    if (isPastTtl(item, w.nowMs)) redating = true;
    else {
      kept++;
      oldest ??= item.created_at;
    }
  }
  if (!redating) {
    recounts.delete(key);
    if (recounts.size >= MAX_RECOUNTS) recounts.delete(recounts.keys().next().value as string);
    recounts.set(key, { stored, kept, since: w.since, until: oldest });
  }
  return Math.min(kept, stored);
}
