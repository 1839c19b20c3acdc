// The bot side's edits of its own messages (streamed answers): one conditional UpdateItem each, in order.
import { ConflictError, ForbiddenError, NotFoundError } from '../shared/errors';
import type { ChatOwner } from '../entities/chats';
import { keys } from '../entities/keys';
import { applyEdit, readMessage, toMessage, type Message } from '../entities/messages';
import { isRetained, retentionWindow, type RetentionWindow } from '../policies/retention';

export interface Edit {
  content: string;
  /** The bot's own number for this edit: applied only above the last one applied (edits sent out of order). */
  version?: number;
}

/**
 * The bot side edits one of its own messages (a streamed answer: many edits a second) in one UpdateItem.
 * Edits apply in order: `edited_at` only moves forward (so a client keeps the copy with the latest), and
 * with `version` an edit older than the last one applied is refused (409) rather than written over it, and the
 * last one repeated (same version and content) answers 200 with the message, writing nothing: a safe retry. The
 * stream record of the update is the publication. A refused edit writes nothing; a message the bot's retention
 * no longer keeps is not found.
 */
export async function editMessage(owner: ChatOwner, chatId: string, messageId: string, edit: Edit, w: RetentionWindow = retentionWindow({})): Promise<Message> {
  const key = keys.message(owner.userId, chatId, messageId);
  const kept = { ...(w.since && { since: w.since }), nowSeconds: Math.floor(w.nowMs / 1000) };
  let now = new Date().toISOString();
  for (let attempt = 0; ; attempt++) {
    const edited = await applyEdit(key, { content: edit.content, ...(edit.version !== undefined && { version: edit.version }), at: now, kept });
    if (edited) return toMessage(edited);
    // Error path only: say why, or move past an edit stamped in the same millisecond (or by a clock ahead).
    const item = await readMessage(owner.userId, chatId, messageId);
    if (!item || !isRetained(item, w)) throw new NotFoundError('Message not found');
    if (item.sender_type !== 'outcoming') throw new ForbiddenError("Only the bot's or an operator's messages can be edited");
    if (edit.version !== undefined && typeof item.edit_version === 'number' && item.edit_version >= edit.version) {
      // The same edit again (a retry whose first reply was lost): applied already, so answered as it was then.
      if (item.edit_version === edit.version && item.content === edit.content) return toMessage(item);
      throw new ConflictError(`A newer edit of this message is applied already (version ${item.edit_version})`);
    }
    if (attempt >= 3) throw new ConflictError('The message is being edited concurrently; retry');
    now = new Date(Math.max(Date.now(), (Date.parse(String(item.edited_at)) || 0) + 1)).toISOString();
  }
}
