// The visitor answers an interactive message: the answer checked against what the bot asked, recorded once by a conditional update.
import { ConflictError, InvalidInputError, NotFoundError } from '../shared/errors';
import type { ChatOwner } from '../entities/chats';
import { keys } from '../entities/keys';
import { isInteractive, type Card, type Choice, type ContentAttributes, type FormField, type SubmittedValues } from '../entities/interactive';
import { applyAnswer, readMessage, toMessage, type Message, type MessageItem } from '../entities/messages';
import { LIMITS } from '../policies/limits';
import { isRetained, retentionWindow, type RetentionWindow } from '../policies/retention';

/** The body as parsed (lambdas/http/answer.ts): one of four shapes. */
export type Answer = { value: string } | { card: number; payload: string } | { values: Record<string, string> } | { rating: number; comment?: string };

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TEL_RE = /^\+?[0-9][0-9 ().-]*$/;

function formValues(fields: FormField[], values: Record<string, string>): Record<string, string> {
  const names = new Set(fields.map((f) => f.name));
  const unknown = Object.keys(values).find((n) => !names.has(n));
  if (unknown !== undefined) throw new InvalidInputError(`values.${unknown}: the form has no such field`);
  const out: Record<string, string> = {};
  for (const f of fields) {
    const value = (values[f.name] ?? '').trim();
    if (value === '') {
      if (f.required) throw new InvalidInputError(`values.${f.name}: is required`);
      continue;
    }
    const max = LIMITS.answerLength[f.type];
    if (Array.from(value).length > max) throw new InvalidInputError(`values.${f.name}: must be at most ${max} characters`);
    if (f.type === 'email' && !EMAIL_RE.test(value)) throw new InvalidInputError(`values.${f.name}: must be an e-mail address`);
    if (f.type === 'tel' && !TEL_RE.test(value)) throw new InvalidInputError(`values.${f.name}: must be a telephone number`);
    if (f.type === 'select' && !f.options?.some((o) => o.value === value)) throw new InvalidInputError(`values.${f.name}: must be one of the field's options`);
    out[f.name] = value;
  }
  return out;
}

/** What the answer records, if it fits the message's type and items (else a 400 naming the field). */
export function submittedValues(contentType: string, attributes: ContentAttributes, answer: Answer): SubmittedValues {
  const misfit = () => new InvalidInputError(`The body does not fit a message of content_type ${contentType}`);
  switch (contentType) {
    case 'input_select': {
      if (!('value' in answer)) throw misfit();
      if (!(attributes.items as Choice[]).some((c) => c.value === answer.value)) throw new InvalidInputError("value: must be one of the message's items");
      return answer.value;
    }
    case 'cards': {
      if (!('card' in answer)) throw misfit();
      const card = (attributes.items as Card[])[answer.card];
      if (!card) throw new InvalidInputError(`card: the message has no card ${answer.card}`);
      if (!card.actions.some((a) => a.type === 'postback' && a.payload === answer.payload)) throw new InvalidInputError("payload: must be a postback's payload of that card");
      return { card: answer.card, payload: answer.payload };
    }
    case 'form':
      if (!('values' in answer)) throw misfit();
      return formValues(attributes.items as FormField[], answer.values);
    default:
      if (!('rating' in answer)) throw misfit();
      return { rating: answer.rating, ...(answer.comment?.trim() && { comment: answer.comment.trim() }) };
  }
}

/**
 * Records the visitor's answer to an interactive message of its chat in one conditional UpdateItem (only while
 * none is recorded, so of two different answers sent at once one wins and the other is a 409). The same answer
 * again is a 200 with the message, writing nothing. The update moves `edited_at`: the stream publishes the
 * answered message as a new version, as it does an edit.
 */
export async function answerMessage(owner: ChatOwner, chatId: string, messageId: string, answer: Answer, w: RetentionWindow = retentionWindow({})): Promise<Message> {
  const item: MessageItem | undefined = await readMessage(owner.userId, chatId, messageId);
  if (!item || !isRetained(item, w)) throw new NotFoundError('Message not found');
  if (item.sender_type !== 'outcoming' || !isInteractive(item.content_type) || item.content_attributes === undefined) {
    throw new InvalidInputError("Only the bot side's interactive messages (input_select, cards, form, input_csat) take a response");
  }
  const submitted = JSON.stringify(submittedValues(item.content_type, JSON.parse(item.content_attributes) as ContentAttributes, answer));
  const recorded = (m: MessageItem) => {
    if (m.submitted_values === submitted) return toMessage(m);
    throw new ConflictError('This message was answered already, with another answer');
  };
  let current = item;
  for (let attempt = 0; current.submitted_values === undefined; attempt++) {
    if (attempt >= 3) throw new ConflictError('The message is being edited concurrently; retry');
    // After its last edit's time: a client keeps the copy with the latest edited_at.
    const at = new Date(Math.max(Date.now(), (Date.parse(String(current.edited_at)) || 0) + 1)).toISOString();
    const answered = await applyAnswer(keys.message(owner.userId, chatId, messageId), submitted, at);
    if (answered) return toMessage(answered);
    // Answered meanwhile, or edited after `at` was taken: read it again.
    const now = await readMessage(owner.userId, chatId, messageId);
    if (!now) throw new NotFoundError('Message not found');
    current = now;
  }
  return recorded(current);
}
