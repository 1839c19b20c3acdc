// Interactive messages (quick replies, cards, a form, a rating): their content_attributes and answer, as stored and shown.

export const INTERACTIVE_TYPES = ['input_select', 'cards', 'form', 'input_csat'] as const;
export type InteractiveType = (typeof INTERACTIVE_TYPES)[number];
export const isInteractive = (contentType: string): contentType is InteractiveType => (INTERACTIVE_TYPES as readonly string[]).includes(contentType);

export const FORM_FIELD_TYPES = ['text', 'email', 'tel', 'textarea', 'select'] as const;

export interface Choice {
  title: string;
  value: string;
}

export type CardAction = { type: 'link'; text: string; uri: string } | { type: 'postback'; text: string; payload: string };

export interface Card {
  title: string;
  description?: string;
  /** An http(s) URL, or the id of a photo of this chat (then also in the message's `files`, where its URL is). */
  media_url?: string;
  actions: CardAction[];
}

export interface FormField {
  name: string;
  label: string;
  type: (typeof FORM_FIELD_TYPES)[number];
  required?: boolean;
  placeholder?: string;
  options?: Choice[];
}

/** What the bot sent, by content_type: input_select Choice items, cards Card items, form FormField items, input_csat {}. */
export type ContentAttributes = { items: Choice[] } | { items: Card[] } | { items: FormField[] } | { items?: never };

/** The visitor's answer: a quick reply's value, a postback, a form's values by name, a rating. */
export type SubmittedValues = string | { card: number; payload: string } | Record<string, string> | { rating: number; comment?: string };

/** content_attributes as the APIs show them: what the bot sent and, once answered, the answer and its time. */
export type ContentAttributesJson = ContentAttributes & { submitted_values?: SubmittedValues; submitted_at?: string };

/**
 * What a message item holds of it: JSON text rather than DynamoDB maps (smaller, and any string the API took
 * round-trips), the answer apart so that one conditional update can record it once.
 */
export interface StoredInteractive {
  content_attributes?: string;
  submitted_values?: string;
  submitted_at?: string;
}

/** The stored attributes of a new interactive message. */
export const storedAttributes = (attributes: ContentAttributes): StoredInteractive => ({ content_attributes: JSON.stringify(attributes) });

/** content_attributes as shown, or undefined for a message that is not interactive. */
export function attributesJson(item: StoredInteractive): ContentAttributesJson | undefined {
  if (item.content_attributes === undefined) return undefined;
  const attributes = JSON.parse(item.content_attributes) as ContentAttributes;
  if (item.submitted_values === undefined) return attributes;
  return { ...attributes, submitted_values: JSON.parse(item.submitted_values) as SubmittedValues, submitted_at: item.submitted_at };
}

/** The ids of this chat's files that cards show (media_url that is no URL), with the card each is on. */
export function cardMediaIds(contentType: string, attributes: ContentAttributes | undefined): { card: number; id: string }[] {
  if (contentType !== 'cards' || !attributes) return [];
  return (attributes as { items: Card[] }).items.flatMap((c, card) => (c.media_url && !/^https?:/i.test(c.media_url) ? [{ card, id: c.media_url }] : []));
}
