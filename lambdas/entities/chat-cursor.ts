// The Bot API's chat list cursor: the bot and the page's boundary (the activity key of its last chat), as
// base64url JSON; one given back is accepted only if it names the caller's bot and a boundary as keys.ts builds it.
import { InvalidInputError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import { keys } from './keys';

interface CursorBody {
  bot: string;
  before: string;
}

const CURSOR_KEYS = ['before', 'bot'] as const;
/** An activity time as every item stores it (Date#toISOString). */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The boundary a cursor of this bot carries; anything else is a 400. */
export function decodeCursor(cursor: string, botId: string): string {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  if (!isCursorBody(body) || body.bot !== botId || !isActivityKey(body.before)) throw new InvalidInputError('Invalid cursor');
  return body.before;
}

/** A client's JSON has exactly the cursor's attributes, each a string. */
const isCursorBody = (body: unknown): body is CursorBody =>
  typeof body === 'object' &&
  body !== null &&
  Object.keys(body).sort().join() === CURSOR_KEYS.join() &&
  Object.values(body).every((v) => typeof v === 'string');

/**
 * A chat's activity key as keys.ts builds it (an activity time, a chat id): anything else, e.g. an empty or
 * over-long value DynamoDB itself would refuse in a key condition, is not a cursor of ours.
 */
function isActivityKey(before: string): boolean {
  const at = before.slice(0, before.indexOf('#'));
  const chatId = before.slice(at.length + 1);
  return ISO_UTC.test(at) && isUuid(chatId) && keys.activityAt(at, chatId) === before;
}

/** The cursor of the page that follows the boundary `before`; null at the end. */
export const encodeCursor = (botId: string, before: string | undefined): string | null =>
  before === undefined ? null : Buffer.from(JSON.stringify({ bot: botId, before } satisfies CursorBody)).toString('base64url');
