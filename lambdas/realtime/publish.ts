// DynamoDB stream → every new or edited message, every read action, every typing indicator and every settled
// direct upload, published to the owner's channel; a new message first moves its chat's activity and unread
// counter.
// Records of one channel go out in order; a failure is reported per record so only the rest is retried
// (Powertools' batch processor, lambdas/aws/stream-batch.ts).
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { messageFromItem, toMessage } from '../entities/messages';
import { fileFromItem, toUploadJson } from '../entities/files';
import { chatFromItem } from '../entities/chats';
import { typingFromItem } from '../entities/typing';
import { countMessage, type CountedMessage } from '../entities/chat-activity';
import { publish } from '../centrifuge/hub';
import { userChannel } from '../centrifuge/channels';
import { clientInterfaceOpen } from '../policies/bot-access';
import { log } from '../shared/log';
import { config } from '../shared/config';
import { processStreamBatch } from '../aws/stream-batch';
import { entityOf, streamImage } from '../aws/dynamo';

interface Publication {
  channel: string;
  data: unknown;
  /** The bot whose client interface the publication belongs to (nothing goes out while it is closed). */
  botId: string;
  /** A new message whose chat the stream updates first (its counters and activity). */
  counts?: CountedMessage;
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
  const to = (owner: Owned, data: unknown, counts?: CountedMessage): Publication => ({ channel: userChannel(owner.user_id), botId: owner.bot_id, data, counts });
  switch (entityOf(item)) {
    case 'message': {
      // A new message, or a new version of an edited one (a client replaces its copy: same id, later edited_at).
      const m = messageFromItem(item);
      if (inserted || (modified && m.is_edited && m.edited_at !== (old && messageFromItem(old).edited_at))) {
        return to(m, { type: 'message', data: await toMessage(m) }, inserted && m.count_in_chat ? m : undefined);
      }
      return undefined;
    }
    case 'typing': {
      const t = typingFromItem(item);
      return inserted || modified ? to(t, { type: 'action', data: { action: 'typing', chat_id: t.chat_id, sender: t.sender } }) : undefined;
    }
    case 'file': {
      // A direct upload's record settled by its checks (its status changed).
      const f = fileFromItem(item);
      const settled = (f.status === 'uploaded' || f.status === 'rejected') && f.status !== (old && fileFromItem(old).status);
      return modified && settled ? to(f, { type: 'file', data: await toUploadJson(f) }) : undefined;
    }
    case 'chat': {
      const c = chatFromItem(item);
      return modified && c.last_event === 'read' ? to(c, { type: 'action', data: { action: 'read', chat_id: c.id } }) : undefined;
    }
    default:
      return undefined;
  }
}

export async function handler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  // Realtime off (no @connections endpoint): the chats are moved, nothing is published (lib/consumers.ts publisherFor).
  const realtime = config().wsManagementEndpoint !== undefined;
  // Each record's publication in stream order, then each channel's in stream order; channels go out in parallel.
  // A failure holds back the later records of its channel (a failure to read a record: every later one).
  return processStreamBatch(event, {
    prepare: publicationOf,
    run: {
      lane: (pub) => pub.channel,
      step: async (pub, record) => {
        // The chat first: a client that refreshes on the publication sees the message's effect.
        if (pub.counts) await countMessage(pub.counts, record.dynamodb?.SequenceNumber ?? '');
        // A bot turned off, or its client interface disabled, since a socket connected: the socket is the
        // client interface too, so nothing more goes to it (its next connect is refused with 103).
        if (realtime && (await clientInterfaceOpen(pub.botId))) await publish(pub.channel, pub.data);
      },
    },
    logFailure,
  });
}

function logFailure(record: DynamoDBRecord, err: unknown): void {
  log('error', 'publish failed; the record will be retried', {
    sequence_number: record.dynamodb?.SequenceNumber,
    event_id: record.eventID,
  }, err);
}
