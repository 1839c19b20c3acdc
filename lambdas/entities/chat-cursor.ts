// The Bot API's chat list cursor: the gsi1 key of the last chat of a page, as base64url JSON; one given back is
// accepted only if it is a chat key of the caller's bot exactly as keys.ts builds it.
import { InvalidInputError } from '../shared/errors';
import { isUuid } from '../shared/ids';
import { keys } from './keys';
import type { ChatPageKey } from './chats';

const CURSOR_KEYS = ['gsi1pk', 'gsi1sk', 'pk', 'sk'] as const;
/** An activity time as every item stores it (Date#toISOString). */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function decodeCursor(cursor: string, botId: string): ChatPageKey {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    key = undefined;
  }
  if (!isPageKey(key) || !isChatKeyOf(key, botId)) throw new InvalidInputError('Invalid cursor');
  return key;
}

/** A client's JSON has exactly the four key attributes, each a string. */
const isPageKey = (key: unknown): key is ChatPageKey =>
  typeof key === 'object' &&
  key !== null &&
  Object.keys(key).sort().join() === CURSOR_KEYS.join() &&
  Object.values(key).every((v) => typeof v === 'string');

/**
 * A chat's gsi1 key of this bot as keys.ts builds it (a user and a chat id, an activity time): anything else,
 * e.g. an empty or over-long value DynamoDB itself would refuse as a start key, is not a cursor of ours.
 */
function isChatKeyOf(key: ChatPageKey, botId: string): boolean {
  const [userId, chatId] = [key.pk.slice(keys.userPartition('').length), key.sk.slice(keys.chatPrefix.length)];
  const at = key.gsi1sk.slice(0, -(chatId.length + 1));
  if (!isUuid(userId) || !isUuid(chatId) || !ISO_UTC.test(at)) return false;
  const made: Record<string, string> = { ...keys.chat(userId, chatId), ...keys.chatActivity(botId, at, chatId) };
  return CURSOR_KEYS.every((k) => made[k] === key[k]);
}

/** The cursor that continues after `last` (a page's LastEvaluatedKey); null at the end. */
export const encodeCursor = (last: ChatPageKey | undefined): string | null =>
  last ? Buffer.from(JSON.stringify(Object.fromEntries(CURSOR_KEYS.map((k) => [k, last[k]])))).toString('base64url') : null;
