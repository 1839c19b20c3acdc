// The echo bot's interactive messages: what it asks for `menu`, `card`, `form` and `rate`, and the words it
// answers a message.response with (docs/bot-api.md, "Interactive messages").

/** A message the bot sends: its question in `content`, its shape in `content_attributes`. */
export interface Ask {
  content: string;
  content_type: 'input_select' | 'cards' | 'form' | 'input_csat';
  content_attributes: object;
}

export type Keyword = 'menu' | 'card' | 'form' | 'rate';

/** The keyword a user message is, if it is one (whole text, any case, spaces around ignored). */
export function keywordOf(content: string): Keyword | undefined {
  const word = content.trim().toLowerCase();
  return (['menu', 'card', 'form', 'rate'] as const).find((k) => k === word);
}

/**
 * What the bot asks for a keyword. The card's photo is a file of the chat the bot uploaded (`photoId`), so it
 * shows without any other server; its link goes to the stack's own API reference (`/docs` of `apiUrl`).
 */
export function askFor(keyword: Keyword, links: { apiUrl: string; photoId?: string }): Ask {
  switch (keyword) {
    case 'menu':
      return {
        content: 'What would you like to drink?',
        content_type: 'input_select',
        content_attributes: { items: [{ title: 'Tea', value: 'tea' }, { title: 'Coffee', value: 'coffee' }, { title: 'Juice', value: 'juice' }] },
      };
    case 'card':
      return {
        content: 'Here is a card.',
        content_type: 'cards',
        content_attributes: {
          items: [
            {
              title: 'The echo bot',
              description: 'A photo, a link, and a button whose press reaches the bot.',
              ...(links.photoId && { media_url: links.photoId }),
              actions: [
                { type: 'link', text: 'Read the API docs', uri: `${links.apiUrl.replace(/\/+$/, '')}/docs` },
                { type: 'postback', text: 'Say hello', payload: 'hello' },
              ],
            },
          ],
        },
      };
    case 'form':
      return {
        content: 'Tell me who you are.',
        content_type: 'form',
        content_attributes: {
          items: [
            { name: 'name', label: 'Name', type: 'text', required: true },
            { name: 'email', label: 'E-mail', type: 'email', required: true, placeholder: 'you@example.com' },
          ],
        },
      };
    case 'rate':
      return { content: 'How did I do?', content_type: 'input_csat', content_attributes: {} };
  }
}

/** The card's photo: a 120×80 PNG (a white speech bubble on teal), drawn once and kept here as bytes. */
export const CARD_PHOTO = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAHgAAABQCAIAAABd+SbeAAABDElEQVR42u3cwQ3DMAwDQG7SfbO0O0EfRVomsc7gBIcgD1tiXschhQQBaNACGjRoCqBBC2jQoCmA/pC1FujfOJ4/oP+Ie2f07Ip7N/QM8b1cPAOJL+HOWOIyd4YT17hDuWMdxB3uUO5Yh3LHOpQ71qHcsQ7ljnUod6xBPwd6zTigZ0CvSQc0aNCgQYOerXzS2hft1wEaNGjQoN11uFQC7T4a9ObQ3gy9gt9C2VxHSdmkUknZ7F1J2TRpSdl8dIPYxH9P2Q5Lg9hW1tpwK8ueoc3ZSbvgu+KOWLrXbvAdtL6OkrUGGtBPbqABfZk1aNB7lVeBBr1F7x3otjVo0LpJQYMW0KAFNGjQAnqTvAHgvGttoUdmKwAAAABJRU5ErkJggg==',
  'base64',
);

type Choice = { title: string; value: string };
type Action = { type: 'link'; text: string; uri: string } | { type: 'postback'; text: string; payload: string };

/** The answered message of a message.response webhook, as much of it as the words need. */
export interface AnsweredMessage {
  content_type: string;
  content_attributes?: { items?: unknown[]; submitted_values?: unknown };
}

/**
 * The words for an answer: the chosen item's title (found by its value), the pressed button's text and payload,
 * the form's name and e-mail (or all its values), the rating and its comment. Undefined when there is no answer.
 */
export function responseWords(message: AnsweredMessage): string | undefined {
  const attributes = message.content_attributes;
  const answer = attributes?.submitted_values;
  if (answer === undefined || answer === null) return undefined;
  const items = attributes?.items ?? [];
  switch (message.content_type) {
    case 'input_select': {
      const chosen = (items as Choice[]).find((i) => i.value === answer);
      return `You chose ${chosen?.title ?? (answer as string)}`;
    }
    case 'cards': {
      const { card, payload } = answer as { card: number; payload: string };
      const button = (items as { actions?: Action[] }[])[card]?.actions?.find((a) => a.type === 'postback' && a.payload === payload);
      return `You pressed ${button?.text ?? 'a button'} (payload: ${payload})`;
    }
    case 'form': {
      const values = answer as Record<string, string>;
      if (values.name && values.email) return `Thanks, ${values.name} (${values.email})`;
      const given = Object.entries(values).map(([name, value]) => `${name}: ${value}`);
      return given.length > 0 ? `Thanks, I got ${given.join(', ')}` : 'Thanks for the form';
    }
    case 'input_csat': {
      const { rating, comment } = answer as { rating: number; comment?: string };
      return `Thanks for rating ${rating}/5${comment ? `: "${comment}"` : ''}`;
    }
    default:
      return undefined;
  }
}
