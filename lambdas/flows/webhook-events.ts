// The event a bot's webhook receives for each user message and each answer to a bot's interactive message (built when it is delivered), and whether an event
// about a chat may still go out; reminders are built in flows/reminders.ts, deliveries in adapters/webhooks.ts.
import { toChat, type ChatItem } from '../entities/chats';
import { chatUserAndRevocation } from '../policies/revocation';
import { toMessage, type MessageItem } from '../entities/messages';
import { retainedUnread, retentionWindow, type Retained } from '../policies/retention';

/** What the dispatcher queues for a user message: enough to build the event later, without reading anything now. */
export interface WebhookJob {
  kind?: 'message';
  /** Which event: a new user message (the default), or the user's answer to an interactive message of the bot. */
  event_type?: 'message.response';
  bot_id: string;
  message: MessageItem;
  /** 0 for the first delivery, then 1, 2, ... for the retries. */
  attempt: number;
}

/**
 * A message job's X-Webhook-Id, the same on every retry: the message id for its message.created; for its
 * message.response, the id with a suffix (an answer is recorded once, so one id per message is exact).
 */
export const webhookId = (job: WebhookJob): string => (job.event_type === 'message.response' ? `${job.message.id}:response` : job.message.id);

/** The user as every event shows it. */
export interface WebhookUser {
  id: string;
  external_id: string | null;
  first_name: string;
  last_name: string;
}

export interface WebhookEvent {
  event: 'message.created' | 'message.response';
  bot_id: string;
  chat: ReturnType<typeof toChat>;
  user: WebhookUser;
  message: Awaited<ReturnType<typeof toMessage>>;
}

/**
 * An event's chat item and user, and whether the user was erased (its event is then never sent), in one
 * BatchGet (strongly consistent when the caller decides on the chat).
 */
export async function chatAndUser(
  c: { user_id: string; chat_id: string; bot_id: string; external_id?: string },
  consistent = false,
): Promise<{ chat?: ChatItem; user: WebhookUser; erased: boolean }> {
  const { chat, user: names, erased } = await chatUserAndRevocation(c, consistent);
  return {
    erased,
    chat,
    user: { id: c.user_id, external_id: c.external_id ?? null, first_name: names?.first_name ?? '', last_name: names?.last_name ?? '' },
  };
}

/**
 * Whether an event about this chat may still go out: its user is not erased and the chat is still there. The
 * erasure's revocation record expires a day after it, but a job can come back later than that (a dead-letter
 * queue redriven): a chat never comes back, so its absence says erased too. Strongly consistent.
 */
export async function mayStillSend(c: { user_id: string; chat_id: string; bot_id: string }): Promise<boolean> {
  const { chat, erased } = await chatAndUser(c, true);
  return Boolean(chat) && !erased;
}

/**
 * The event for a message: the chat and user come from one BatchGet; file URLs are presigned now; the chat's
 * unread counter as the bot's retention leaves it, as the APIs show it. Undefined when the user has been
 * erased (or the chat is gone: see mayStillSend): what is queued for them is dropped.
 */
export async function buildWebhookEvent(job: WebhookJob, bot: Retained = {}): Promise<WebhookEvent | undefined> {
  const m = job.message;
  let { chat, user, erased } = await chatAndUser(m);
  // No chat in an eventually consistent read: gone, or created a moment ago; a strongly consistent one says which.
  if (!chat && !erased) ({ chat, user, erased } = await chatAndUser(m, true));
  if (erased || !chat) return undefined;
  return {
    event: job.event_type ?? 'message.created',
    bot_id: job.bot_id,
    chat: { ...toChat(chat), unread_msg_by_user: await retainedUnread(chat, 'user', retentionWindow(bot)) },
    user,
    message: await toMessage(m),
  };
}

