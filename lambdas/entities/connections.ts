// Realtime sockets as stored (centrifuge/hub.ts writes them): a connection, its user's reference to it, and its
// subscription to the user's channel; the codecs that read them and the queries that list a user's or a channel's.
import { queryAll, type RawItem, type Stored } from '../aws/dynamo';
import { keys } from './keys';
import { isPublisherHold } from './stream-holds';
import { isChannelStream, streamFromItem, type ChannelStream } from './channel-stream';

/** A connection item (`entity: connection`): $connect writes it, the protocol's connect binds it. */
export interface ConnectionItem {
  connection_id: string;
  user_id?: string;
  bot_id?: string;
  /** Bound by a connect command. */
  connected: boolean;
  /** Its token's expiry (epoch seconds); absent on connections bound before expiries were kept. */
  token_exp?: number;
}

/** A socket as a reference or a subscription lists it: its connection, and when it came (for ordering). */
export interface SocketItem {
  connection_id: string;
  /** A reference's creation time (ordering a user's sockets). */
  created_at?: string;
  /** A subscription's token expiry (epoch seconds). */
  token_exp?: number;
  ttl?: number;
  /** A subscription made by a subscribe that registers the socket in the channel's stream (entities/channel-stream.ts). */
  positioned?: true;
}

const number = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The codec: a connection item as DynamoDB returns it. */
export const connectionFromItem = (raw: RawItem): ConnectionItem => {
  const item = raw as Stored<Partial<ConnectionItem>>;
  const [userId, botId, exp] = [text(item.user_id), text(item.bot_id), number(item.token_exp)];
  return {
    connection_id: String(item.connection_id),
    ...(userId !== undefined && { user_id: userId }),
    ...(botId !== undefined && { bot_id: botId }),
    connected: item.connected === true,
    ...(exp !== undefined && { token_exp: exp }),
  };
};

/** The codec of references and subscriptions; one without a connection id (none is written so) is left out. */
const socketsFromItems = (raws: RawItem[]): SocketItem[] =>
  raws.flatMap((raw) => {
    const item = raw as Stored<Partial<SocketItem>>;
    const id = text(item.connection_id);
    if (id === undefined) return [];
    const [createdAt, exp, ttl] = [text(item.created_at), number(item.token_exp), number(item.ttl)];
    return [
      {
        connection_id: id,
        ...(createdAt !== undefined && { created_at: createdAt }),
        ...(exp !== undefined && { token_exp: exp }),
        ...(ttl !== undefined && { ttl }),
        ...(item.positioned === true && { positioned: true as const }),
      },
    ];
  });

/** The user's references to its sockets: one strongly consistent Query (a few hundred bytes: one read unit). */
export async function connectionRefs(userId: string, projection?: string): Promise<SocketItem[]> {
  return socketsFromItems(
    await queryAll({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :conn)',
      ExpressionAttributeValues: { ':pk': keys.userPartition(userId), ':conn': keys.connectionRefPrefix },
      ProjectionExpression: projection,
      ConsistentRead: true,
    }),
  );
}

/**
 * Every subscription to a channel, whether the publisher holds it (entities/stream-holds.ts) and its stream
 * position (entities/channel-stream.ts), all in the same partition: one strongly consistent Query (pages only
 * past 1 MB of subscribers). Whole items: a projection would cost the same read units.
 */
export async function channelAudience(channel: string): Promise<{ sockets: SocketItem[]; held: boolean; stream?: ChannelStream }> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscribers(channel) },
    ConsistentRead: true,
  });
  const stream = items.find((i) => isChannelStream(channel, i));
  return { sockets: socketsFromItems(items), held: items.some((i) => isPublisherHold(channel, i)), ...(stream && { stream: streamFromItem(stream) }) };
}
