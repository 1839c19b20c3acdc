// Typing indicators of the bot side: one small item per chat and sender, written at most once every
// TYPING_INTERVAL_MS; its stream record is what the publisher sends to the user's channel (so typing takes
// the same path, retries and ordering as messages). Calls in between are answered and cost one refused write.
import type { ChatOwner } from '../entities/chats';
import { markTyping } from '../entities/typing';

/** At most one typing publication per chat and sender in this time; a client shows it for a few seconds. */
export const TYPING_INTERVAL_MS = 2000;
/** The item is gone (by TTL) well after any client stopped showing it. */
const TYPING_TTL_SECONDS = 60;

/** Records that the bot or an operator is typing; false when one was published less than the interval ago. */
export function startTyping(owner: ChatOwner, chatId: string, sender: 'bot' | 'operator', nowMs = Date.now()): Promise<boolean> {
  const item = { chat_id: chatId, user_id: owner.userId, bot_id: owner.botId, sender, at_ms: nowMs, ttl: Math.floor(nowMs / 1000) + TYPING_TTL_SECONDS };
  return markTyping(item, nowMs - TYPING_INTERVAL_MS);
}
