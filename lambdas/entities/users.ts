// End users of a bot: found or created by external id in one conditional upsert (one round trip for a
// returning user); a new user also gets its reference by id (the Bot API finds and erases users by id).
// While the move of data runs (entities/layout.ts), a user may still be at its legacy key: a session moves it
// first, and every look-up reads both keys (entities/legacy-users.ts).
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, conditionMet, dynamo, isConditionFailed, optional, tableName, type RawItem, type Stored } from '../aws/dynamo';
import { keys, type Key } from './keys';
import { layoutState } from './layout';
import { moveLegacyUserOf, userAtEitherKey, usersAtEitherKey } from './legacy-users';
import { newUuid } from '../shared/ids';
import { ConflictError, NotFoundError } from '../shared/errors';

export interface User {
  id: string;
  external_id: string;
  bot_id: string;
  first_name: string;
  last_name: string;
  image_url: string | null;
  /** `erasing` from the Bot API's DELETE until the erasure completes (then the user is gone). */
  status: 'active' | 'erasing';
}

/** The user item (`entity: user`, keyed by bot and external id): the user's fields, its status told by erase_task. */
export interface UserItem extends Omit<User, 'status'> {
  /** Its user_ref is written (addUserRef). */
  ref?: true;
  /** An erasure runs: no new session. */
  erase_task?: string;
}

/** The codec: a user item as DynamoDB returns it (names absent on items of older writes read as empty). */
export const userFromItem = (raw: RawItem): UserItem => {
  const item = raw as Stored<UserItem>;
  return {
    id: item.id,
    external_id: item.external_id,
    bot_id: item.bot_id,
    first_name: item.first_name ?? '',
    last_name: item.last_name ?? '',
    image_url: item.image_url ?? null,
    ...optional(item, 'ref', 'erase_task'),
  };
};

export interface UserNames {
  first_name?: string;
  last_name?: string;
}

/**
 * Creates the user when the external id is new, otherwise returns it; given names overwrite the stored ones.
 * `if_not_exists` makes concurrent first sessions of one external id agree on a single user id. A user being
 * erased gets no session (409) until the erasure is done; then the external id starts a new user.
 */
export async function findOrCreateUser(botId: string, externalId: string, names: UserNames): Promise<User> {
  // A returning user still at its legacy key is moved before the upsert, which then finds it (never a second user).
  if ((await layoutState()).legacyUsers) await moveLegacyUserOf(botId, externalId);
  const now = new Date().toISOString();
  const nameExpr = (field: 'first_name' | 'last_name') =>
    names[field] !== undefined ? `${field} = :${field}` : `${field} = if_not_exists(${field}, :empty)`;
  let out;
  try {
    out = await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.user(botId, externalId),
        ConditionExpression: 'attribute_not_exists(erase_task)',
        UpdateExpression: [
          'SET entity = :entity',
          'id = if_not_exists(id, :id)',
          'external_id = :ext',
          'bot_id = :bot',
          nameExpr('first_name'),
          nameExpr('last_name'),
          'image_url = if_not_exists(image_url, :null)',
          '#status = if_not_exists(#status, :active)',
          'created_at = if_not_exists(created_at, :now)',
          'last_seen_at = :now',
        ].join(', '),
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':entity': 'user',
          ':id': newUuid(),
          ':ext': externalId,
          ':bot': botId,
          ...((names.first_name === undefined || names.last_name === undefined) && { ':empty': '' }),
          ':null': null,
          ':active': 'active',
          ':now': now,
          ...(names.first_name !== undefined && { ':first_name': names.first_name }),
          ...(names.last_name !== undefined && { ':last_name': names.last_name }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
  } catch (err) {
    if (isConditionFailed(err)) throw new ConflictError('This user is being erased; a new session can start once the erasure is done', { cause: err });
    throw err;
  }
  const item = userFromItem(out.Attributes ?? {});
  if (!item.ref) await addUserRef(item);
  return toUser(item);
}

/**
 * The user's reference by id, then the mark that it exists (in that order: a crash between leaves the mark
 * unset, and the next session writes the reference again). Users made before references existed get theirs
 * at their next session.
 */
async function addUserRef(item: UserItem): Promise<void> {
  const table = tableName();
  await dynamo.send(
    new PutCommand({
      TableName: table,
      Item: { ...keys.userRef(item.id), entity: 'user_ref', user_id: item.id, bot_id: item.bot_id, external_id: item.external_id },
    }),
  );
  await dynamo.send(
    new UpdateCommand({
      TableName: table,
      Key: keys.user(item.bot_id, item.external_id),
      UpdateExpression: 'SET #ref = :true',
      ConditionExpression: 'id = :id',
      ExpressionAttributeNames: { '#ref': 'ref' },
      ExpressionAttributeValues: { ':true': true, ':id': item.id },
    }),
  ).catch((err) => {
    if (!isConditionFailed(err)) throw err; // erased and started anew meanwhile: nothing to mark
  });
}

/** The user as the APIs show it. */
function toUser(item: UserItem): User {
  const { ref: _ref, erase_task, ...user } = item;
  return { ...user, status: erase_task ? 'erasing' : 'active' };
}

/** The bot's user with this external id (Bot API), strongly consistent; 404 when the bot has none. */
export async function findUser(botId: string, externalId: string): Promise<User> {
  const item = (await layoutState()).legacyUsers
    ? await userAtEitherKey(botId, externalId)
    : (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.user(botId, externalId), ConsistentRead: true }))).Item;
  if (!item) throw new NotFoundError('User not found');
  return toUser(userFromItem(item));
}

export interface UserRef {
  user_id: string;
  bot_id: string;
  external_id: string;
  /** The erase task, once an erasure began. */
  erase_task?: string;
}

const userRefFromItem = (raw: RawItem): UserRef => {
  const item = raw as Stored<UserRef>;
  return {
    user_id: item.user_id,
    bot_id: item.bot_id,
    external_id: item.external_id,
    ...optional(item, 'erase_task'),
  };
};

/** The reference of the bot's user with this id; another bot's user, or none, is a 404. */
export async function userRef(botId: string, userId: string): Promise<UserRef> {
  const out = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.userRef(userId), ConsistentRead: true }));
  const ref = out.Item && userRefFromItem(out.Item);
  if (!ref || ref.bot_id !== botId) throw new NotFoundError('User not found');
  return ref;
}

/** The bot's user with this id (Bot API). */
export async function getUser(botId: string, userId: string): Promise<User> {
  const ref = await userRef(botId, userId);
  const user = await findUser(botId, ref.external_id);
  if (user.id !== userId) throw new NotFoundError('User not found');
  return user;
}

/** The bot's users with these external ids, by external id (one BatchGet; eventually consistent, as a list is). */
export async function usersByExternalId(botId: string, externalIds: string[]): Promise<Map<string, UserItem>> {
  const items = (await layoutState()).legacyUsers ? await usersAtEitherKey(botId, externalIds, true) : await batchGet(externalIds.map((e) => keys.user(botId, e)));
  return new Map(items.map(userFromItem).map((u) => [u.external_id, u]));
}

/** The user's reference names an erase task (`taskId`, unless one is named already, which concurrent DELETEs then agree on): the task's id. */
export async function claimErase(userId: string, taskId: string): Promise<string> {
  const out = await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.userRef(userId),
      UpdateExpression: 'SET erase_task = if_not_exists(erase_task, :task)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':task': taskId },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return userRefFromItem(out.Attributes ?? {}).erase_task ?? taskId;
}

/**
 * Where the user item may be: while the move runs, its legacy key first, then its new one. A move between the
 * two writes carries what the first wrote (the move's condition sees the change and reads again), or finds the
 * item gone; so the second write reaches it wherever it went.
 */
async function userKeys(botId: string, externalId: string): Promise<Key[]> {
  const legacy = (await layoutState()).legacyUsers;
  return [...(legacy ? [keys.legacyUser(botId, externalId)] : []), keys.user(botId, externalId)];
}

/** The user item (found by external id) refuses new sessions while the erasure runs, if it is still this user's. */
export async function markUserErasing(botId: string, externalId: string, userId: string, taskId: string): Promise<void> {
  for (const Key of await userKeys(botId, externalId)) {
    // Refused: already deleted by an earlier run, or not at this key.
    await conditionMet(
      dynamo.send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: 'SET erase_task = :task',
          ConditionExpression: 'id = :id',
          ExpressionAttributeValues: { ':task': taskId, ':id': userId },
        }),
      ),
    );
  }
}

/** Deletes the user item only if it is still this user's: once deleted, the external id may start a new user. */
export async function deleteUserItem(botId: string, externalId: string, userId: string): Promise<void> {
  for (const Key of await userKeys(botId, externalId)) {
    await conditionMet(
      dynamo.send(
        new DeleteCommand({ TableName: tableName(), Key, ConditionExpression: 'attribute_not_exists(pk) OR id = :id', ExpressionAttributeValues: { ':id': userId } }),
      ),
    );
  }
}
