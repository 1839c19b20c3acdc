// A channel's stream (Centrifuge's recovery): its position (offset and epoch) and where each socket's live
// publications start, in one item (keys.channelStream), and its positioned publications kept for recovery
// (keys.channelHistory) until their TTL. Every write here is to one item: its conditions make it exact without a
// transaction (docs/realtime.md "Recovery").
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailedItem, conditionMet, dynamo, isConditionFailed, queryAll, tableName, type RawItem } from '../aws/dynamo';
import { keys } from './keys';

/** How long a publication stays recoverable (and a channel's position outlives its last publication or subscribe). */
export const HISTORY_TTL_SECONDS = 24 * 3600;
/** A subscribe that registered a socket and never activated it within this (its function died: its timeout is 10 s, lib/function-def.ts): the socket is told to reconnect. */
export const PENDING_STALE_SECONDS = 60;

/** A socket's entry in the stream item: an attribute of its own, so no map must exist before it is set. */
const FROM_PREFIX = 'from#';
const fromAttr = (connectionId: string) => FROM_PREFIX + connectionId;

/** Stream sequence numbers compare as text once padded (they have up to 40 digits). */
const padded = (seq: string) => seq.padStart(40, '0');
const ttl = () => Math.floor(Date.now() / 1000) + HISTORY_TTL_SECONDS;
/** A new epoch: a channel's stream made again (after its TTL, or an erasure) never matches an old position. */
const newEpoch = () => randomBytes(6).toString('base64url');

export interface ChannelStream {
  epoch: string;
  /** The top: the offset of the channel's last positioned publication (0: none yet in this epoch). */
  offset: number;
  /** The stream sequence number (padded) of the record positioned last: a redelivered record is not positioned again. */
  lastSeq?: string;
  /**
   * Per socket, the offset its live publications start after (a publication at or below it came in its subscribe
   * reply); a negative value is a subscribe still sending its reply (-epoch seconds when it began): nothing live yet.
   */
  from: Map<string, number>;
}

/** The codec of the stream item (as a Query of the subscriptions partition or a write's ALL_NEW returns it). */
export function streamFromItem(raw: RawItem): ChannelStream {
  const from = new Map<string, number>();
  for (const [name, value] of Object.entries(raw)) if (name.startsWith(FROM_PREFIX) && typeof value === 'number') from.set(name.slice(FROM_PREFIX.length), value);
  return {
    epoch: String(raw.epoch ?? ''),
    offset: typeof raw.offset === 'number' ? raw.offset : 0,
    ...(typeof raw.last_seq === 'string' && { lastSeq: raw.last_seq }),
    from,
  };
}

/** Whether an item of a channel's subscriptions partition is its stream item. */
export const isChannelStream = (channel: string, item: { sk?: unknown }): boolean => item.sk === keys.channelStream(channel).sk;

export async function readStream(channel: string): Promise<ChannelStream | undefined> {
  const item = (await dynamo.send(new GetCommand({ TableName: tableName(), Key: keys.channelStream(channel), ConsistentRead: true }))).Item;
  return item && streamFromItem(item);
}

/** A publication at its position. */
export interface Positioned {
  epoch: string;
  offset: number;
  /** The stream after the position moved: the sockets whose live publications start below `offset` get it. */
  stream: ChannelStream;
}

/**
 * Gives a record's publication the channel's next offset: the history item first (so a position always has its
 * publications behind it), then the position, conditional on being unchanged since `known` (one writer per
 * channel, the publisher's lane; a condition failing returns the item as it is, and it goes again). A record
 * already positioned (a redelivery: its sequence number is the last positioned or before it) gets no second
 * offset: the last one positioned is returned as it was (its history item written again, the same), an earlier
 * one as 'done' (its lane moved on only after posting it). 'done' too when the stream is gone (an erasure): it is
 * not made again. Two writes per publication, no read.
 */
export async function positionPublication(channel: string, seq: string, data: unknown, known: ChannelStream): Promise<Positioned | 'done'> {
  let stream: ChannelStream | undefined = known;
  const at = seq ? padded(seq) : undefined;
  for (let tries = 1; stream; tries++) {
    if (stream.lastSeq && at && at < stream.lastSeq) return 'done';
    const again: boolean = stream.lastSeq !== undefined && at === stream.lastSeq;
    const { epoch } = stream;
    const offset: number = again ? stream.offset : stream.offset + 1;
    const kept = await conditionMet(
      dynamo.send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...keys.channelHistory(channel, epoch, offset), entity: 'channel_history', data, ...(at && { seq: at }), ttl: ttl() },
          // Free, or this record's own (a redelivery after the history was written and before the position moved),
          // or an earlier record's that never moved the position (given up: its lane has moved on to this one).
          ConditionExpression: at ? 'attribute_not_exists(pk) OR seq <= :seq' : 'attribute_not_exists(pk)',
          ...(at && { ExpressionAttributeValues: { ':seq': at } }),
        }),
      ),
    );
    if (again && kept) return { epoch, offset, stream };
    // The history's slot taken by a later record, or the position moved since `known`: from the stream as it is now.
    const moved: Positioned | Moved = kept ? await movePosition(channel, stream, offset, at) : { now: await readStream(channel) };
    if (!('now' in moved)) return moved;
    if (tries >= 5) throw new Error(`the position of ${channel} moved under each of 5 tries`);
    stream = moved.now;
  }
  return 'done';
}

/** What a write found instead of the position it expected: the stream as it is now (undefined: erased). */
interface Moved {
  now: ChannelStream | undefined;
}

/**
 * The position moved from `stream`'s offset to `offset`, conditional on neither having changed: the publication at
 * its place, or what the failed condition found.
 */
async function movePosition(channel: string, stream: ChannelStream, offset: number, at: string | undefined): Promise<Positioned | Moved> {
  const { epoch } = stream;
  try {
    const out = await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.channelStream(channel),
        UpdateExpression: `SET #offset = :offset, #ttl = :ttl${at ? ', last_seq = :seq' : ''}`,
        ConditionExpression: '#offset = :prev AND epoch = :epoch',
        ExpressionAttributeNames: { '#offset': 'offset', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':epoch': epoch, ':offset': offset, ':prev': stream.offset, ':ttl': ttl(), ...(at && { ':seq': at }) },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { epoch, offset, stream: streamFromItem(out.Attributes ?? {}) };
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    return { now: fromFailed(err) };
  }
}

const fromFailed = (err: unknown): ChannelStream | undefined => {
  const item = conditionFailedItem(err);
  return item && streamFromItem(item);
};

/**
 * A subscribe's first step: the socket registered as still sending its reply (no live publication goes to it),
 * and the channel's position then, made if the channel has none (a new epoch, offset 0).
 */
export async function registerSubscriber(channel: string, connectionId: string): Promise<ChannelStream> {
  const out = await dynamo.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.channelStream(channel),
      UpdateExpression: 'SET entity = :entity, epoch = if_not_exists(epoch, :epoch), #offset = if_not_exists(#offset, :zero), #from = :pending, #ttl = :ttl',
      ExpressionAttributeNames: { '#offset': 'offset', '#from': fromAttr(connectionId), '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':entity': 'channel_stream', ':epoch': newEpoch(), ':zero': 0, ':pending': -Math.floor(Date.now() / 1000), ':ttl': ttl() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return streamFromItem(out.Attributes ?? {});
}

/**
 * A subscribe's last step, once its reply is sent: live publications go to the socket from after `offset`, if that
 * is still the channel's position (else the stream as it is now is returned: the caller sends what came
 * meanwhile, and tries again). 'gone': the socket unsubscribed meanwhile, or the channel's stream was erased.
 */
export async function activateSubscriber(channel: string, connectionId: string, epoch: string, offset: number): Promise<'active' | 'gone' | ChannelStream> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.channelStream(channel),
        UpdateExpression: 'SET #from = :offset',
        ConditionExpression: 'epoch = :epoch AND #offset = :offset AND #from < :zero',
        ExpressionAttributeNames: { '#offset': 'offset', '#from': fromAttr(connectionId) },
        ExpressionAttributeValues: { ':epoch': epoch, ':offset': offset, ':zero': 0 },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'active';
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
    const now = fromFailed(err);
    return now && now.epoch === epoch && (now.from.get(connectionId) ?? 0) < 0 ? now : 'gone';
  }
}

/** An unsubscribe or a gone socket: its entry removed (an item that does not exist is not made). */
export async function dropSubscriber(channel: string, connectionId: string): Promise<void> {
  await conditionMet(
    dynamo.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.channelStream(channel),
        UpdateExpression: 'REMOVE #from',
        ConditionExpression: 'attribute_exists(#from)',
        ExpressionAttributeNames: { '#from': fromAttr(connectionId) },
      }),
    ),
  );
}

/** A positioned publication as recovery returns it. */
export interface HistoryItem {
  offset: number;
  data: unknown;
}

/**
 * The channel's publications of `epoch` after `after` up to `upTo` (the position read just before, whose history
 * is all written): one strongly consistent Query. Fewer than asked means some expired (past the history's TTL).
 */
export async function historyBetween(channel: string, epoch: string, after: number, upTo: number): Promise<HistoryItem[]> {
  if (upTo <= after) return [];
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: {
      ':pk': keys.channelHistoryPartition(channel),
      ':from': keys.channelHistoryAt(epoch, after + 1),
      ':to': keys.channelHistoryAt(epoch, upTo),
    },
    ProjectionExpression: 'sk, #data',
    ExpressionAttributeNames: { '#data': 'data' },
    ConsistentRead: true,
  });
  return items.map((i): HistoryItem => ({ offset: Number(String(i.sk).slice(epoch.length + 1)), data: i.data as unknown }));
}

/** Every history item's key of a channel (erasure deletes them). */
export async function historyKeys(channel: string): Promise<{ pk: string; sk: string }[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.channelHistoryPartition(channel) },
    ProjectionExpression: 'pk, sk',
  });
  return items.map((i) => ({ pk: String(i.pk), sk: String(i.sk) }));
}
