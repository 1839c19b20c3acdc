// Realtime: connections and subscriptions, and fan-out to sockets through the @connections API.
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWrite, dynamo, isConditionFailed, tableName } from '../aws/dynamo';
import { config } from '../shared/config';
import { closeConnection, postToConnection } from '../aws/connections';
import { keys } from '../entities/keys';
import { channelAudience, connectionFromItem, connectionRefs } from '../entities/connections';
import { dropSubscriber, historyKeys, type ChannelStream } from '../entities/channel-stream';
import { ForbiddenError, UnauthenticatedError } from '../shared/errors';
import type { TokenClaims, VerifiedClaims } from '../adapters/tokens';
import { channelUser, userChannel } from './channels';
import { DISCONNECTS, disconnectFrame, type Disconnect } from './errors';

/** API Gateway closes a WebSocket after 2 hours at most; records of older connections are dead. */
export const CONNECTION_TTL_SECONDS = 2 * 3600;

const ttl = () => Math.floor(Date.now() / 1000) + CONNECTION_TTL_SECONDS;

/**
 * $connect: remembers the connection, bound to the user of the URL's token, and the user's reference to it
 * (an erasure closes the user's sockets from there), in one BatchWriteItem.
 */
export async function recordConnection(connectionId: string, claims: TokenClaims): Promise<void> {
  const expires = ttl();
  const createdAt = new Date().toISOString();
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
          created_at: createdAt,
          ttl: expires,
        },
      },
    },
    // Its created_at orders the user's sockets: past MAX_SOCKETS_PER_USER the oldest are closed (limits.ts).
    { PutRequest: { Item: { ...keys.connectionRef(claims.userId, connectionId), entity: 'connection_ref', connection_id: connectionId, created_at: createdAt, ttl: expires } } },
  ]);
}

/**
 * The protocol's connect command: binds the connection to the token's user, unless $connect already bound it
 * to another user or its record is gone. The token's expiry is kept: past it, nothing more is published to the
 * socket until a refresh command brings a new token (refreshConnection).
 */
export async function bindConnection(connectionId: string, claims: VerifiedClaims): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.connection(connectionId),
        UpdateExpression:
          'SET entity = :entity, connection_id = :id, user_id = :user, bot_id = :bot, connected = :true, token_exp = :exp, #ttl = :ttl',
        // The record $connect made (never one written anew: an erasure or $disconnect may have deleted it).
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(user_id) OR user_id = :user)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':entity': 'connection',
          ':id': connectionId,
          ':user': claims.userId,
          ':bot': claims.botId,
          ':true': true,
          ':exp': claims.exp,
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
 * The protocol's refresh command: a new token of the connection's own user moves its expiry, and its
 * subscription's (if it has one), so publications go on.
 */
export async function refreshConnection(connectionId: string, claims: VerifiedClaims): Promise<void> {
  const set = (key: ReturnType<typeof keys.connection>, condition: string, values: Record<string, unknown> = {}) =>
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET token_exp = :exp',
        ConditionExpression: condition,
        ExpressionAttributeValues: { ':exp': claims.exp, ...values },
      }),
    );
  try {
    await set(keys.connection(connectionId), 'connected = :true AND user_id = :user', { ':true': true, ':user': claims.userId });
  } catch (err) {
    if (isConditionFailed(err)) throw new UnauthenticatedError('the connection belongs to another user, or is closed', { cause: err });
    throw err;
  }
  try {
    await set(keys.subscription(userChannel(claims.userId), connectionId), 'attribute_exists(pk)');
  } catch (err) {
    if (!isConditionFailed(err)) throw err; // not subscribed: nothing more to move
  }
}

/**
 * Subscribes a connection to a user's channel, with its token's expiry. `known` is what a connect command in
 * the same frame bound (no check needed); otherwise the connection is read, then one transaction checks it
 * is unchanged and writes. `positioned`: it asked for stream positions (recovery.ts registers it in the stream).
 */
export async function subscribe(connectionId: string, channel: string, known?: { userId: string; exp: number }, positioned = false): Promise<void> {
  const owner = channelUser(channel);
  if (!owner || (known && known.userId !== owner)) throw new ForbiddenError('not your channel');
  const put = (exp: number | undefined) => ({
    TableName: tableName(),
    // positioned: its subscribe registers it in the channel's stream next, and it gets live publications only from
    // where that says (the publisher tells it apart from a subscription without positions, which gets every one).
    Item: { ...keys.subscription(channel, connectionId), entity: 'subscription', connection_id: connectionId, ...(exp !== undefined && { token_exp: exp }), ...(positioned && { positioned }), ttl: ttl() },
  });
  if (known) {
    await dynamo.send(new PutCommand(put(known.exp)));
    return;
  }
  // A refresh landing between the read and the write changes token_exp: read again, once.
  for (let tries = 1; ; tries++) {
    const item = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.connection(connectionId), ConsistentRead: true }))).Item;
    const conn = item && connectionFromItem(item);
    if (!conn?.connected) throw new UnauthenticatedError('connect first');
    if (conn.user_id !== owner) throw new ForbiddenError('not your channel');
    // Past its token's expiry it is still subscribed: the next publication tells it to reconnect (publish).
    const exp = conn.token_exp;
    try {
      await dynamo.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: tableName(),
                Key: keys.connection(connectionId),
                // Unchanged since the read (a connection bound before expiries were kept has none).
                ConditionExpression: `connected = :true AND user_id = :user AND ${exp === undefined ? 'attribute_not_exists(token_exp)' : 'token_exp = :exp'}`,
                ExpressionAttributeValues: { ':true': true, ':user': owner, ...(exp !== undefined && { ':exp': exp }) },
              },
            },
            { Put: put(exp) },
          ],
        }),
      );
      return;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      if (tries === 2) throw new UnauthenticatedError('the connection changed meanwhile: connect again', { cause: err });
    }
  }
}

/** The subscription, and the socket's entry in the channel's stream if it was positioned (only those have one). */
export async function unsubscribe(connectionId: string, channel: string): Promise<void> {
  const out = await dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.subscription(channel, connectionId), ReturnValues: 'ALL_OLD' }));
  if (out.Attributes?.positioned) await dropSubscriber(channel, connectionId);
}

/**
 * $disconnect, and a post that found the socket gone: forget the connection, its subscription and the user's
 * reference to it (a socket counts against MAX_SOCKETS_PER_USER while its reference exists).
 */
export async function removeConnection(connectionId: string, userId?: string): Promise<void> {
  const out = await dynamo.send(
    new DeleteCommand({ TableName: tableName(), Key: keys.connection(connectionId), ReturnValues: 'ALL_OLD' }),
  );
  const owner = userId ?? (out.Attributes && connectionFromItem(out.Attributes).user_id);
  if (!owner) return;
  // A connection can only ever subscribe to its own user's channel, so this is its one subscription.
  await Promise.all([
    unsubscribe(connectionId, userChannel(owner)),
    dynamo.send(new DeleteCommand({ TableName: tableName(), Key: keys.connectionRef(owner, connectionId) })),
  ]);
}

/**
 * Closes a socket with a Centrifuge Disconnect push (the client acts on its code), then forgets it. A socket
 * already gone (410) is only forgotten.
 */
export async function disconnectSocket(connectionId: string, disconnect: Disconnect, userId?: string): Promise<void> {
  if (await postToConnection(connectionId, disconnectFrame(disconnect))) await closeConnection(connectionId);
  await removeConnection(connectionId, userId);
}

const ERASED_FRAME = disconnectFrame(DISCONNECTS.userErased);

/**
 * An erased user: every socket it has is closed (through its references, subscribed or not), and the records
 * of its connections and subscriptions deleted, the publisher's hold on its channel, and its channel's stream
 * (position and history). Idempotent; with realtime off there are no sockets.
 */
export async function closeUserConnections(userId: string): Promise<void> {
  const refs = (await connectionRefs(userId)).map((r) => r.connection_id);
  const channel = userChannel(userId);
  const audience = await channelAudienceOf(channel);
  const subscribers = audience.sockets.map((s) => s.id);
  const history = await historyKeys(channel);
  // Subscribed or not (a socket opened before connection refs existed has none, but is subscribed).
  const ids = [...new Set([...refs, ...subscribers])];
  // A Disconnect push with a terminal code first (the client does not reconnect), then the socket closed.
  if (config().wsManagementEndpoint) await Promise.all(ids.map(async (id) => (await postToConnection(id, ERASED_FRAME)) && closeConnection(id)));
  await batchWrite([
    ...ids.map((id) => ({ DeleteRequest: { Key: keys.connection(id) } })),
    ...subscribers.map((id) => ({ DeleteRequest: { Key: keys.subscription(channel, id) } })),
    ...refs.map((id) => ({ DeleteRequest: { Key: keys.connectionRef(userId, id) } })),
    // The publisher's hold on the channel, if its records wait in the redo queue: it names the user.
    ...(audience.held ? [{ DeleteRequest: { Key: keys.publisherHold(channel) } }] : []),
    ...(audience.stream ? [{ DeleteRequest: { Key: keys.channelStream(channel) } }] : []),
    ...history.map((key) => ({ DeleteRequest: { Key: key } })),
  ]);
}

/**
 * Every connection subscribed to a channel: one Query (pages only past 1 MB of subscribers). Strongly
 * consistent: a socket told "subscribed" fetches what it missed, and what is sent after that fetch must find
 * its subscription (and an erasure must find every socket to close).
 */
export async function channelSubscribers(channel: string): Promise<string[]> {
  return (await channelSockets(channel)).map((s) => s.id);
}

/** A channel's sockets to publish to, and whether the publisher holds the channel (entities/stream-holds.ts). */
export interface Audience {
  /** Newest subscription first (its ttl is set when it subscribes), with each socket's token expiry (none for a subscription made before expiries were kept). */
  sockets: { id: string; exp?: number; positioned?: true }[];
  held: boolean;
  /** The channel's stream position, and where each socket's live publications start (none before its first subscribe). */
  stream?: ChannelStream;
}

/** The channel's audience: one strongly consistent Query, which reads the publisher's hold with the sockets. */
export async function channelAudienceOf(channel: string): Promise<Audience> {
  const since = (s: { ttl?: number }) => s.ttl ?? 0;
  const { sockets, held, stream } = await channelAudience(channel);
  return {
    sockets: sockets
      .sort((a, b) => since(b) - since(a))
      .map((s) => ({ id: s.connection_id, ...(s.token_exp !== undefined && { exp: s.token_exp }), ...(s.positioned && { positioned: s.positioned }) })),
    held,
    ...(stream && { stream }),
  };
}

const channelSockets = async (channel: string) => (await channelAudienceOf(channel)).sockets;
