// Unread reminders (the bot setting unread_reminder_seconds): when the bot side's replies stay unread that long,
// the bot's webhook gets one `chat.unread_reminder` per burst. A burst is the replies since the user's last read
// (or since the last reminder fired); its reminder is scheduled once, by its first reply, as a delayed job on the
// webhook queue, and the chat's reminder item says which burst is due and whether it fired, so a redelivered
// record or job never gives a second one. A read needs no write here: the firing checks it (docs/reminders.md).
import { claimReminder, putReminder, recordIncluded } from '../entities/reminders';
import { readChat, toChat } from '../entities/chats';
import { retainedUnread, retentionWindow, type Retained } from '../policies/retention';
import { messagesFrom, toMessage, type MessageItem } from '../entities/messages';
import { chatAndUser, type WebhookUser } from './webhook-events';

/** What the dispatcher queues (delayed until the reminder is due) and the deliverer fires. */
export interface ReminderJob {
  kind: 'reminder';
  bot_id: string;
  user_id: string;
  chat_id: string;
  external_id?: string;
  /** The burst's first reply (id and time). */
  burst: string;
  burst_at: string;
  /** 0 for the first delivery, then 1, 2, ... for the retries, which carry the event built the first time. */
  attempt: number;
  event?: ReminderEvent;
}

export interface ReminderEvent {
  event: 'chat.unread_reminder';
  bot_id: string;
  chat: ReturnType<typeof toChat>;
  user: WebhookUser;
  /** Up to REMINDER_MESSAGES unread replies, oldest first. */
  messages: Awaited<ReturnType<typeof toMessage>>[];
  unread_count: number;
  first_unread_at: string;
}

/** The most replies a reminder carries (unread_count says how many there are). */
export const REMINDER_MESSAGES = 10;
/** How many of a chat's messages, from the burst's first reply on, the firing reads to find the unread replies. */
const UNREAD_SCAN = 100;

/** The webhook's id for a reminder: the same on every retry, and per burst. */
export const reminderId = (event: ReminderEvent): string => `reminder:${event.chat.id}:${event.messages[0].id}`;


/**
 * A reply of the bot side, seen on the stream: if it starts a burst, its reminder becomes due (the returned job,
 * to queue with the delay left); a reply while a reminder is due changes nothing, nor does a redelivered record
 * of a burst that fired. Idempotent: the first reply of a burst, delivered again, returns the same job.
 */
export async function scheduleReminder(m: MessageItem, seconds: number): Promise<{ job: ReminderJob; delaySeconds: number } | undefined> {
  const chat = await readChat(m.user_id, m.chat_id);
  const lastRead = chat?.last_read_at ?? '';
  if (!chat || m.created_at <= lastRead) return undefined; // gone, or already read
  const dueAt = Date.parse(m.created_at) + seconds * 1000;
  const put = await putReminder(
    m.chat_id,
    {
      burst: m.id,
      burst_at: m.created_at,
      user_id: m.user_id,
      bot_id: m.bot_id,
      due_at: new Date(dueAt).toISOString(),
      // Kept a day past its time: long enough for every retry, then gone.
      ttl: Math.floor(dueAt / 1000) + 24 * 3600,
    },
    // No reminder yet; this reply's own (a redelivery before it fired); or a newer burst than the last one,
    // which was read, fired without this reply among those it carried (a reply it carried, whose record
    // comes late, starts nothing; one written after a firing that recorded nothing, as firings before
    // `included` existed, starts one), or was due over an hour ago and never fired (its job dropped: the
    // webhook or the setting removed meanwhile).
    { lastRead, staleBefore: new Date(Date.now() - 3600_000).toISOString() },
  );
  if (!put.written) {
    const old = put.old;
    // Fired a moment ago, what it carried not yet written: the stream tries this record again shortly.
    if (old?.fired_at && !old.included && old.burst_at < m.created_at && Date.now() - Date.parse(old.fired_at) < 60_000) {
      throw new Error(`reminder of chat ${m.chat_id} is firing; reply ${m.id} is looked at again`);
    }
    return undefined;
  }
  const job: ReminderJob = {
    kind: 'reminder',
    bot_id: m.bot_id,
    user_id: m.user_id,
    chat_id: m.chat_id,
    ...(m.external_id && { external_id: m.external_id }),
    burst: m.id,
    burst_at: m.created_at,
    attempt: 0,
  };
  return { job, delaySeconds: Math.max(0, Math.ceil((dueAt - Date.now()) / 1000)) };
}

/**
 * The reminder is due: claimed once (a duplicate job, or one of a burst a newer one replaced, finds it taken;
 * the same queue message redelivered, `token`, may take it again), then the chat read strongly consistently
 * (with its user, one BatchGet) and its replies from the burst on (one Query).
 * Undefined when there is nothing to send: claimed already, or every reply read by now.
 */
export async function fireReminder(job: ReminderJob, token: string, bot: Retained = {}): Promise<ReminderEvent | undefined> {
  if (!(await claimReminder(job.chat_id, job.burst, token))) return undefined;
  // The chat (strongly consistent: has the user read?) and the user, in one round trip.
  const { chat, user, erased } = await chatAndUser(job, true);
  if (!chat || erased) return undefined;
  const lastRead = chat.last_read_at ?? '';
  const unread = (await messagesFrom(job.user_id, job.chat_id, job.burst, UNREAD_SCAN)).filter((m) => m.sender_type === 'outcoming' && m.created_at > lastRead);
  // What this reminder carries: a reply among them whose record reaches the dispatcher late starts no new
  // burst; one it did not see does.
  await recordIncluded(job.chat_id, job.burst, token, unread.map((m) => m.id));
  if (unread.length === 0) return undefined;
  return {
    event: 'chat.unread_reminder',
    bot_id: job.bot_id,
    chat: { ...toChat(chat), unread_msg_by_user: await retainedUnread(chat, 'user', retentionWindow(bot)) },
    user,
    messages: await Promise.all(unread.slice(0, REMINDER_MESSAGES).map((i) => toMessage(i))),
    unread_count: unread.length,
    first_unread_at: unread[0].created_at,
  };
}
