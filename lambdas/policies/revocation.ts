// An erased user's tokens: refused from the moment the Bot API's DELETE answers, for as long as any of them
// could still be valid (a session and its realtime token live SESSION_TTL_SECONDS); a request that reads its own
// chat carries the check in that read (ownChat).
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, dynamo, entityOf, tableName } from '../aws/dynamo';
import { config } from '../shared/config';
import { UnauthenticatedError } from '../shared/errors';
import { keys } from '../entities/keys';
import { chatFromItem, rejectChatAccess, type ChatItem } from '../entities/chats';
import { userFromItem, type UserItem } from '../entities/users';
import { layoutState } from '../entities/layout';
import { userAtEitherKey } from '../entities/legacy-users';

/** How long after the last token could expire the revocation is kept (clock skew, a slow request). */
const MARGIN_SECONDS = 3600;

export async function revokeUser(userId: string): Promise<void> {
  const ttl = Math.floor(Date.now() / 1000) + config().sessionTtlSeconds + MARGIN_SECONDS;
  await dynamo.send(new PutCommand({ TableName: tableName(), Item: { ...keys.revokedUser(userId), entity: 'revoked_user', ttl } }));
}

/** Strongly consistent: a DELETE that answered is seen at once. */
export async function isRevoked(userId: string): Promise<boolean> {
  const out = await dynamo.send(
    new GetCommand({ TableName: tableName(), Key: keys.revokedUser(userId), ProjectionExpression: 'pk', ConsistentRead: true }),
  );
  return Boolean(out.Item);
}

export const erasedUserError = () => new UnauthenticatedError('This user has been erased; the token is no longer valid');

/** Every request with a user's token asks this, where its scope says (lambdas/access; a send and a read mark ask it in their chat read: ownChat). */
export async function assertNotRevoked(userId: string): Promise<void> {
  if (await isRevoked(userId)) throw erasedUserError();
}

/**
 * The user's own chat, for a client request that writes to it (a send, a read mark; lambdas/access builds its
 * scope with it): the chat and the request's erasure check in one strongly consistent BatchGetItem; 401 (erased),
 * 403 or 404 otherwise.
 */
export async function ownChat(userId: string, chatId: string): Promise<ChatItem> {
  const items = await batchGet([keys.chat(userId, chatId), keys.revokedUser(userId)], true);
  if (items.some((i) => entityOf(i) === 'revoked_user')) throw erasedUserError();
  const chat = items.find((i) => entityOf(i) === 'chat');
  return chat ? chatFromItem(chat) : rejectChatAccess(userId, chatId);
}

/**
 * A chat, its user (when the external id is known) and whether the user was erased, in one BatchGetItem
 * (strongly consistent when the caller decides on the chat): what an event about the chat is built from.
 */
export async function chatUserAndRevocation(
  c: { user_id: string; chat_id: string; bot_id: string; external_id?: string },
  consistent: boolean,
): Promise<{ chat?: ChatItem; user?: UserItem; erased: boolean }> {
  const items = await batchGet(
    [keys.chat(c.user_id, c.chat_id), keys.revokedUser(c.user_id), ...(c.external_id ? [keys.user(c.bot_id, c.external_id)] : [])],
    consistent,
  );
  const chat = items.find((i) => entityOf(i) === 'chat');
  let user = items.find((i) => entityOf(i) === 'user');
  // While the move runs the user may still be at its legacy key (or move between reads): read both, in that order.
  if (!user && c.external_id && (await layoutState()).legacyUsers) user = await userAtEitherKey(c.bot_id, c.external_id);
  return { chat: chat && chatFromItem(chat), user: user && userFromItem(user), erased: items.some((i) => entityOf(i) === 'revoked_user') };
}
