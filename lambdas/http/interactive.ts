// The Bot API's send body: a message of any content type, the interactive ones with their content_attributes (valibot).
import * as v from 'valibot';
import type { HttpRequest } from './http';
import { InvalidInputError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import { CONTENT_TYPES } from '../entities/file-types';
import { FORM_FIELD_TYPES, INTERACTIVE_TYPES, type ContentAttributes } from '../entities/interactive';
import { LIMITS } from '../policies/limits';
import { BotSenderBody, MessageBody, messageInput } from './params';
import { httpUrl, isHttpUrl, maxChars, parse, text, unicodeString } from './validate';
import type { MessageInput } from '../flows/send';

const L = LIMITS;

/** An array of min..max entries. */
const list = <S extends v.GenericSchema>(item: S, min: number, max: number, what: string) =>
  v.pipe(v.array(item, `must be an array of ${what}`), v.minLength(min, `must have ${min} to ${max} ${what}`), v.maxLength(max, `must have ${min} to ${max} ${what}`));

/** An object whose refusals read well: a missing entry "is required", anything not an object "must be an object …". */
const obj = <E extends v.ObjectEntries>(entries: E, shape: string) =>
  v.object(entries, (issue) => (issue.input === undefined && issue.expected?.startsWith('"') ? 'is required' : `must be an object ${shape}`));

const Choice = obj({ title: text(1, L.choiceTitleLength), value: text(1, L.choiceValueLength) }, '{title, value}');

export const InputSelectAttributes = obj({ items: list(Choice, 1, L.quickReplies, 'items') }, '{items}');

const actionText = text(1, L.actionTextLength);
const CardAction = v.variant(
  'type',
  [
    obj({ type: v.literal('link'), text: actionText, uri: httpUrl }, '{type, text, uri}'),
    obj({ type: v.literal('postback'), text: actionText, payload: v.pipe(text(1, L.payloadBytes), v.maxBytes(L.payloadBytes, `must be at most ${L.payloadBytes} bytes as UTF-8`)) }, '{type, text, payload}'),
  ],
  'must be "link" or "postback"',
);

const Card = obj(
  {
    title: text(1, L.choiceTitleLength),
    description: v.optional(text(0, L.cardDescriptionLength)),
    media_url: v.optional(v.pipe(unicodeString, maxChars(L.urlLength), v.check((s) => isHttpUrl(s) || isUuid(s), 'must be an http(s) URL or a file id of this chat'))),
    actions: list(CardAction, 0, L.cardActions, 'actions'),
  },
  '{title, description?, media_url?, actions}',
);

export const CardsAttributes = obj({ items: list(Card, 1, L.cards, 'items') }, '{items}');

const fieldTypes = FORM_FIELD_TYPES.join(', ');
const FormField = v.pipe(
  obj(
    {
      name: v.pipe(v.string('must be a string'), v.regex(/^[A-Za-z0-9_-]{1,64}$/, `must be 1 to ${L.fieldNameLength} letters, digits, _ or -`)),
      label: text(1, L.fieldLabelLength),
      type: v.picklist(FORM_FIELD_TYPES, `must be one of ${fieldTypes}`),
      required: v.optional(v.boolean('must be true or false')),
      placeholder: v.optional(text(0, L.placeholderLength)),
      options: v.optional(list(Choice, 1, L.selectOptions, 'options')),
    },
    '{name, label, type, required?, placeholder?, options?}',
  ),
  v.forward(
    v.check((f) => (f.type === 'select') === (f.options !== undefined), 'must be given for a select field, and only for one'),
    ['options'],
  ),
);

export const FormAttributes = obj(
  { items: v.pipe(list(FormField, 1, L.formFields, 'items'), v.check((items) => new Set(items.map((f) => f.name)).size === items.length, 'must not repeat a field name')) },
  '{items}',
);

/** A rating takes no attributes: any object is read as {} (its keys are not stored). */
export const CsatAttributes = v.custom<Record<string, never>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'must be an object ({})');

/** The whole of content_attributes stays small: it is stored on the message item. */
const sized = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(schema, v.check((x) => Buffer.byteLength(JSON.stringify(x)) <= L.contentAttributesBytes, `must be at most ${L.contentAttributesBytes} bytes as JSON`));

const interactiveList = INTERACTIVE_TYPES.join(', ');
const base = { ...MessageBody.entries, ...BotSenderBody.entries };

/** POST /api/bot/chats/{chat_id}/messages: content_type picks the shape of content_attributes. */
export const BotMessageBody = v.variant(
  'content_type',
  [
    obj({ ...base, content_attributes: v.optional(v.never(`is only for content_type ${interactiveList}`)) }, '(a message)'),
    obj({ ...base, content_type: v.literal('input_select'), content_attributes: sized(InputSelectAttributes) }, '(a message)'),
    obj({ ...base, content_type: v.literal('cards'), content_attributes: sized(CardsAttributes) }, '(a message)'),
    obj({ ...base, content_type: v.literal('form'), content_attributes: sized(FormAttributes) }, '(a message)'),
    obj({ ...base, content_type: v.literal('input_csat'), content_attributes: sized(CsatAttributes) }, '(a message)'),
  ],
  `must be one of ${[...CONTENT_TYPES, ...INTERACTIVE_TYPES].join(', ')}`,
);

/** The Bot API's send: as a client's, plus content_attributes for an interactive type, whose content (the question) is required. */
export function botMessageBody(req: HttpRequest): MessageInput {
  const body = parse(BotMessageBody, req.json());
  if (!('content_attributes' in body) || body.content_attributes === undefined) return messageInput(req, body);
  if (body.content.trim() === '') throw new InvalidInputError(`content: must not be empty for content_type ${body.content_type} (it is the question)`);
  const input = messageInput(req, body);
  const attributes: ContentAttributes = body.content_type === 'input_csat' ? {} : body.content_attributes;
  return { ...input, content_attributes: attributes };
}
