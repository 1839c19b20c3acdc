// Realtime: connections and subscriptions, and fan-out to sockets through the @connections API.
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, dynamo, isConditionFailed, queryAll, tableName } from '../aws/dynamo';
import { config } from '../shared/config';
import { closeConnection, postToConnection } from '../aws/connections';
import { keys } from '../domain/keys';
import { ForbiddenError, UnauthenticatedError } from '../shared/errors';
import type { TokenClaims } from '../domain/tokens';
import { channelUser, userChannel } from './channels';

/** API Gateway closes a WebSocket after 2 hours at most; records of older connections are dead. */
export const CONNECTION_TTL_SECONDS = 2 * 3600;

const ttl = () => Math.floor(Date.now() / 1000) + CONNECTION_TTL_SECONDS;

/**
 * $connect: remembers the connection, bound to the user of the URL's token, and the user's reference to it
 * (an erasure closes the user's sockets from there), in one BatchWriteItem.
 */
export async function recordConnection(connectionId: string, claims: TokenClaims): Promise<void> {
  const expires = ttl();
  await batchWrite([
    {
      PutRequest: {
        Item: {
          ...keys.connection(connectionId),
          entity: 'connection',
          connection_id: connectionId,
          user_id: claims.userId,
          bot_id: claims.botId,
          connected: false,
          created_at: new Date().toISOString(),
          ttl: expires,
        },
      },
    },
    { PutRequest: { Item: { ...keys.connectionRef(claims.userId, connectionId), entity: 'connection_ref', connection_id: connectionId, ttl: expires } } },
  ]);
}

/**
 * The protocol's connect command: binds the connection to the token's user, unless $connect already bound it
 * to another user or its record is gone.
 */
export async function bindConnection(connectionId: string, claims: TokenClaims): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.connection(connectionId),
        UpdateExpression:
          'SET entity = :entity, connection_id = :id, user_id = :user, bot_id = :bot, connected = :true, #ttl = :ttl',
        // The record $connect made (never one written anew: an erasure or $disconnect may have deleted it).
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(user_id) OR user_id = :user)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':entity': 'connection',
          ':id': connectionId,
          ':user': claims.userId,
          ':bot': claims.botId,
          ':true': true,
          ':ttl': ttl(),
        },
      }),
    );
  } catch (err) {
    if (isConditionFailed(err)) throw new UnauthenticatedError('the connection belongs to another user, or is closed', { cause: err });
    throw err;
  }
}

/**
 * Subscribes a connection to a user's channel. `knownUser` is the user bound by a connect command in the
 * same frame (no check needed); otherwise one transaction checks the connection's user and writes.
 */
export async function subscribe(connectionId: string, channel: string, knownUser?: string): Promise<void> {
  const owner = channelUser(channel);
  if (!owner || (knownUser && knownUser !== owner)) throw new ForbiddenError('not your channel');
  const put = {
    TableName: tableName(),
    Item: { ...keys.subscription(channel, connectionId), entity: 'subscription', connection_id: connectionId, ttl: ttl() },
  };
  if (knownUser) {
    await dynamo.send(new PutCommand(put));
    return;
  }
  try {
    await dynamo.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            ConditionCheck: {
              TableName: tableName(),
              Key: keys.connection(connectionId),
              ConditionExpression: 'connected = :true AND user_id = :user',
              ExpressionAttributeValues: { ':true': true, ':user': owner },
            },
          },
          { Put: put },
        ],
      }),
    );
  } catch (err) {
    if (!(err instanceof TransactionCanceledException)) throw err;
    // Error path only: tell "connect first" from "not your channel".
    const conn = await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.connection(connectionId) }));
    if (conn.Item?.connected) throw new ForbiddenError('not your channel', { cause: err });
    throw new UnauthenticatedError('connect first', { cause: err });
  }
}

export async function unsubscribe(connectionId: string, channel: string): Promise<void> {
  await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.subscription(channel, connectionId) }));
}

/** $disconnect, and a post that found the socket gone: forget the connection and its subscription. */
export async function removeConnection(connectionId: string, userId?: string): Promise<void> {
  const out = await dynamo.send(
    new DeleteCommand({ TableName: tableName(), Key: keys.connection(connectionId), ReturnValues: 'ALL_OLD' }),
  );
  const owner = userId ?? (out.Attributes?.user_id as string | undefined);
  // A connection can only ever subscribe to its own user's channel, so this is its one subscription.
  if (owner) await unsubscribe(connectionId, userChannel(owner));
}

/** Centrifuge's Disconnect push; codes 3500–3999 tell the client not to reconnect. */
const ERASED_FRAME = Buffer.from(JSON.stringify({ push: { disconnect: { code: 3500, reason: 'user erased' } } }));

/**
 * An erased user: every socket it has is closed (through its references, subscribed or not), and the records
 * of its connections and subscriptions deleted. Idempotent; with realtime off there are none.
 */
export async function closeUserConnections(userId: string): Promise<void> {
  const refs = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :conn)',
    ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':conn': keys.connectionRefPrefix },
    ConsistentRead: true,
  });
  const channel = userChannel(userId);
  const subscribers = await channelSubscribers(channel);
  // Subscribed or not (a socket opened before connection refs existed has none, but is subscribed).
  const ids = [...new Set([...refs.map((r) => r.connection_id as string), ...subscribers])];
  // A Disconnect push with a terminal code first (the client does not reconnect), then the socket closed.
  if (config().wsManagementEndpoint) await Promise.all(ids.map(async (id) => (await postToConnection(id, ERASED_FRAME)) && closeConnection(id)));
  await batchWrite([
    ...ids.map((id) => ({ DeleteRequest: { Key: keys.connection(id) } })),
    ...subscribers.map((id) => ({ DeleteRequest: { Key: keys.subscription(channel, id) } })),
    ...refs.map((r) => ({ DeleteRequest: { Key: { pk: r.pk as string, sk: r.sk as string } } })),
  ]);
}

/**
 * Every connection subscribed to a channel: one Query (pages only past 1 MB of subscribers). Strongly
 * consistent: a socket told "subscribed" fetches what it missed, and what is sent after that fetch must find
 * its subscription (and an erasure must find every socket to close).
 */
export async function channelSubscribers(channel: string): Promise<string[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribers(channel) },
    ProjectionExpression: 'connection_id',
    ConsistentRead: true,
  });
  return items.map((i) => i.connection_id).filter((id): id is string => typeof id === 'string');
}

/** A Centrifuge publication frame for a channel. */
export const publicationFrame = (channel: string, data: unknown): string =>
  JSON.stringify({ push: { channel, pub: { data } } });

/**
 * Posts a publication to every subscriber of the channel in parallel. A gone socket (410) is removed and
 * is not an error; any other failure is thrown after all posts settle, so the record is retried.
 */
export async function publish(channel: string, data: unknown): Promise<void> {
  const frame = Buffer.from(publicationFrame(channel, data));
  const owner = channelUser(channel);
  const subscribers = await channelSubscribers(channel);
  if (!subscribers.length) return;
  const results = await Promise.allSettled(
    subscribers.map(async (connectionId) => {
      if (!(await postToConnection(connectionId, frame))) await removeConnection(connectionId, owner);
    }),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
