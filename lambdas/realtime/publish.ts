// DynamoDB stream → every new or edited message, every read action, every typing indicator and every settled
// direct upload, published to the owner's channel; a new message first moves its chat's activity and unread
// counter.
// Records of one channel go out in order; a failure is reported per record so only the rest is retried
// (Powertools' batch processor, lambdas/aws/stream-batch.ts).
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { messageFromItem, toMessage } from '../entities/messages';
import { fileFromItem, toUploadJson } from '../entities/files';
import { countMessage, type CountedMessage } from '../entities/chat-activity';
import { publish } from '../centrifuge/hub';
import { userChannel } from '../centrifuge/channels';
import { clientInterfaceOpen } from '../policies/bot-access';
import { log } from '../shared/log';
import { config } from '../shared/config';
import { processStreamBatch } from '../aws/stream-batch';

interface Publication {
  channel: string;
  data: unknown;
  /** The bot whose client interface the publication belongs to (nothing goes out while it is closed). */
  botId: string;
  /** A new message whose chat the stream updates first (its counters and activity). */
  counts?: CountedMessage;
}

/** What a record publishes, or undefined for records the publisher does not handle. */
export async function publicationOf(record: DynamoDBRecord): Promise<Publication | undefined> {
  const image = record.dynamodb?.NewImage;
  if (!image) return undefined;
  const item = unmarshall(image as Record<string, AttributeValue>);
  // What a MODIFY changed: a retention task re-dating an item (its ttl only) publishes nothing.
  const old = record.eventName === 'MODIFY' && record.dynamodb?.OldImage ? unmarshall(record.dynamodb.OldImage as Record<string, AttributeValue>) : {};
  // Every publication goes to the item's user's channel, on behalf of its bot.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-assignment -- a stream image is unmarshalled untyped (any): no codec reads stream records yet
  const to = (data: unknown, counts?: CountedMessage): Publication => ({ channel: userChannel(item.user_id), botId: item.bot_id, data, counts });
  // A new message, or a new version of an edited one (a client replaces its copy: same id, later edited_at).
  if (item.entity === 'message' && (record.eventName === 'INSERT' || (record.eventName === 'MODIFY' && item.is_edited && item.edited_at !== old.edited_at))) {
    const counts = record.eventName === 'INSERT' && item.count_in_chat ? (item as CountedMessage) : undefined;
    return to({ type: 'message', data: await toMessage(messageFromItem(item)) }, counts);
  }
  if (item.entity === 'typing' && (record.eventName === 'INSERT' || record.eventName === 'MODIFY')) {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- a stream image is unmarshalled untyped (any): no codec reads stream records yet
    return to({ type: 'action', data: { action: 'typing', chat_id: item.chat_id, sender: item.sender } });
  }
  // A direct upload's record settled by its checks (its status changed).
  if (record.eventName === 'MODIFY' && item.entity === 'file' && (item.status === 'uploaded' || item.status === 'rejected') && item.status !== old.status) {
    return to({ type: 'file', data: await toUploadJson(fileFromItem(item)) });
  }
  if (record.eventName === 'MODIFY' && item.entity === 'chat' && item.last_event === 'read') {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- a stream image is unmarshalled untyped (any): no codec reads stream records yet
    return to({ type: 'action', data: { action: 'read', chat_id: item.id } });
  }
  return undefined;
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
