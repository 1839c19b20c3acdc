// DynamoDB stream → every new or edited message, every read action, every typing indicator and every settled
// direct upload, published to the owner's channel; a new message first moves its chat's activity and unread
// counter.
// A user's records go out in stream order, users side by side; a record that keeps failing is set aside with
// the user's later ones (lambdas/aws/stream-batch.ts), so it holds back no one else.
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { messageFromItem, toMessage } from '../entities/messages';
import { fileFromItem, toUploadJson } from '../entities/files';
import { chatFromItem } from '../entities/chats';
import { typingFromItem } from '../entities/typing';
import { countMessage, type CountedMessage } from '../entities/chat-activity';
import { channelAudienceOf, type Audience } from '../centrifuge/hub';
import { publish } from '../centrifuge/fanout';
import { userChannel } from '../centrifuge/channels';
import { clientInterfaceOpen } from '../policies/bot-access';
import { log } from '../shared/log';
import { config } from '../shared/config';
import { LaneHeld, processStreamBatch, type StreamPath } from '../aws/stream-batch';
import { isRedoBatch, redoBatch, streamRedo, type LaneHold } from '../flows/stream-redo';
import { holdChannel, releaseChannel } from '../entities/stream-holds';
import { positionPublication, type Positioned } from '../entities/channel-stream';
import { entityOf, streamImage, streamOwner } from '../aws/dynamo';

/**
 * One try of a record at its slowest: the Query of the channel's sockets (a lane's first), the chat's update (up to three writes),
 * the bot's read, the position (two writes) and the posts, each AWS call bounded at 7 s (lib/function-def.ts AWS_CALL_SECONDS).
 */
const RECORD_BUDGET_MS = 8 * 7_000;
/** Its lanes are channels: the channel of the record's user (every record it publishes has one), else whose it is. */
function channelLane(record: DynamoDBRecord): string {
  const user = record.dynamodb?.NewImage?.user_id?.S ?? record.dynamodb?.OldImage?.user_id?.S;
  return user ? userChannel(user) : streamOwner(record);
}
/** The hold of a lane: on its channel, read by the Query of the channel's sockets. */
const HOLD: LaneHold = { set: holdChannel, release: releaseChannel };

interface Publication {
  channel: string;
  data: unknown;
  /** The bot whose client interface the publication belongs to (nothing goes out while it is closed). */
  botId: string;
  /** A new message whose chat the stream updates first (its counters and activity). */
  counts?: CountedMessage;
  /**
   * Given the channel's next offset and kept for recovery (docs/realtime.md "Recovery"): every publication but a
   * typing indicator, which is stale by the time a socket comes back.
   */
  positioned: boolean;
}

/** Whose item it is: every item the publisher reads names its user and bot. */
interface Owned {
  user_id: string;
  bot_id: string;
}

/** What a record publishes, or undefined for records the publisher does not handle. */
export async function publicationOf(record: DynamoDBRecord): Promise<Publication | undefined> {
  const item = streamImage(record.dynamodb?.NewImage);
  if (!item) return undefined;
  // What a MODIFY changed (its old image read by the same entity's codec): a retention task re-dating an item
  // (its ttl only) publishes nothing.
  const old = record.eventName === 'MODIFY' ? streamImage(record.dynamodb?.OldImage) : undefined;
  const [inserted, modified] = [record.eventName === 'INSERT', record.eventName === 'MODIFY'];
  // Every publication goes to the item's user's channel, on behalf of its bot.
  const to = (owner: Owned, data: unknown, counts?: CountedMessage, positioned = true): Publication => ({
    channel: userChannel(owner.user_id),
    botId: owner.bot_id,
    data,
    counts,
    positioned,
  });
  switch (entityOf(item)) {
    case 'message': {
      // A new message, or a new version of one edited or answered (a client replaces its copy: same id, later edited_at).
      const m = messageFromItem(item);
      if (inserted || (modified && m.edited_at !== undefined && m.edited_at !== (old && messageFromItem(old).edited_at))) {
        return to(m, { type: 'message', data: await toMessage(m) }, inserted && m.count_in_chat ? m : undefined);
      }
      return undefined;
    }
    case 'typing': {
      const t = typingFromItem(item);
      return inserted || modified ? to(t, { type: 'action', data: { action: 'typing', chat_id: t.chat_id, sender: t.sender } }, undefined, false) : undefined;
    }
    case 'file': {
      // A direct upload's record settled by its checks (its status changed).
      const f = fileFromItem(item);
      const settled = (f.status === 'uploaded' || f.status === 'rejected') && f.status !== (old && fileFromItem(old).status);
      return modified && settled ? to(f, { type: 'file', data: await toUploadJson(f) }) : undefined;
    }
    case 'chat': {
      const c = chatFromItem(item);
      // A read moved last_read_at; a change of the chat's list keys alone (the data move, flows/migrate.ts) is no read.
      const read = modified && c.last_event === 'read' && c.last_read_at !== (old && chatFromItem(old).last_read_at);
      return read ? to(c, { type: 'action', data: { action: 'read', chat_id: c.id } }) : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * A batch's channels as read, by channel: a lane reads its channel's audience once, at its first record that
 * publishes. Every record of the batch was written before that read, so a socket that subscribes after it finds
 * their items in the history it fetches once subscribed (the client's rule), and the hold can only be set by
 * this lane, whose later records then go aside anyway.
 */
type Audiences = Map<string, Audience>;

/**
 * Everything one record does: the channel's sockets read (and with them its hold: a held channel's records go
 * after the ones in the redo queue), then side by side the chat's counters and the publication's position, and
 * only once both are written the posts (each step safe to run again).
 */
async function publishRecord(record: DynamoDBRecord, path: StreamPath, audiences: Audiences): Promise<void> {
  const pub = await publicationOf(record);
  if (!pub) return;
  const audience = audiences.get(pub.channel) ?? (await channelAudienceOf(pub.channel));
  audiences.set(pub.channel, audience);
  // Before the counters: a held lane's record counted ahead of its lane's earlier ones would make them look counted.
  if (audience.held && path === 'stream') throw new LaneHeld(pub.channel);
  const seq = record.dynamodb?.SequenceNumber ?? '';
  // The chat and the position touch different items, and neither reads the other: they go together. Both are
  // settled before anything is posted (a client that refreshes on the publication sees the message's effect),
  // and before the record fails: a retry then finds the position this try wrote and keeps it (its history item
  // written again, the same offset).
  const [counted, placed] = await Promise.allSettled([pub.counts && countMessage(pub.counts, seq), placement(pub, seq, audience)]);
  if (counted.status === 'rejected') throw counted.reason;
  if (placed.status === 'rejected') throw placed.reason;
  const at = placed.value;
  if (at === 'none' || at === 'done') return;
  // The sockets it removed or unsubscribed (gone, expired, over the cap) are not posted to again; the stream as
  // the position moved is the next record's to move from.
  const sockets = await publish(pub.channel, audience.sockets, pub.data, at);
  audiences.set(pub.channel, { ...audience, sockets, ...(at && { stream: at.stream }) });
}

/**
 * Where a publication goes out: 'none' when nothing is published, else its position (undefined when it gets
 * none), or 'done' for a record posted before (a redelivery; entities/channel-stream.ts).
 */
async function placement(pub: Publication, seq: string, audience: Audience): Promise<Positioned | undefined | 'none' | 'done'> {
  // Realtime off (no @connections endpoint): the chats are moved, nothing is published (lib/consumers.ts publisherFor).
  // A bot turned off, or its client interface disabled, since a socket connected: the socket is the client
  // interface too, so nothing more goes to it (its next connect is refused with 103). Asked before the position
  // is written: a closed interface's publication is not kept for recovery either.
  if (config().wsManagementEndpoint === undefined || !(await clientInterfaceOpen(pub.botId))) return 'none';
  // Its position first (the history item, then the offset): a redelivered record keeps the one it got, and one
  // already posted before its lane moved on is not posted again. Only on a channel with a stream (a socket
  // subscribed within the history's TTL): no one else could recover it, and an erased user's is not made again.
  if (!pub.positioned || !audience.stream) return undefined;
  return positionPublication(pub.channel, seq, pub.data, audience.stream);
}

export async function handler(event: DynamoDBStreamEvent | SQSEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  const queueUrl = config().publisherRedoQueueUrl;
  const audiences: Audiences = new Map();
  const step = (record: DynamoDBRecord, path: StreamPath) => publishRecord(record, path, audiences);
  const steps = { lane: channelLane, step, logFailure, recordBudgetMs: RECORD_BUDGET_MS, setAside: queueUrl ? streamRedo(queueUrl, HOLD) : undefined };
  // Records set aside, from the redo queue: each user's in order, after the ones before them.
  if (isRedoBatch(event)) return redoBatch(event, steps, HOLD);
  // Each user's records in stream order (its channel, its chats' counters), users side by side.
  return processStreamBatch(event, steps, context);
}

function logFailure(record: DynamoDBRecord, err: unknown): void {
  log('error', 'publish failed; the record will be retried', {
    sequence_number: record.dynamodb?.SequenceNumber,
    event_id: record.eventID,
  }, err);
}
