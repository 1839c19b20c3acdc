// Every key of the single table in one place (docs/architecture.md "Data model" explains the layout).
import { createHash } from 'node:crypto';

export interface Key {
  pk: string;
  sk: string;
}

/** Rate counters' partition keys start so; the read endpoints' IAM grant to move them names it (lib/stack-functions.ts). */
export const RATE_KEY_PREFIX = 'RATE#';

export const keys = {
  bot: (botId: string): Key => ({ pk: `BOT#${botId}`, sk: 'BOT' }),
  clientKey: (clientKey: string): Key => ({ pk: `KEY#${clientKey}`, sk: 'KEY' }),
  /**
   * The user record, keyed by its bot and external id: unique per bot, found in one read, and a partition of its
   * own, so a bot's sessions share no key (docs/scale.md "Hot keys").
   */
  user: (botId: string, externalId: string): Key => ({ pk: `BOT#${botId}#EXT#${externalId}`, sk: 'USER' }),
  /** Where a user record lived before it had a partition of its own: read while the move runs (flows/migrate.ts). */
  legacyUser: (botId: string, externalId: string): Key => ({ pk: `BOT#${botId}`, sk: keys.legacyUserPrefix + externalId }),
  /** Every legacy user item's sort key starts so (the move finds them by it). */
  legacyUserPrefix: 'EXT#',
  /** The partition of everything a user owns (chats, messages, counters): one Query reads a list. */
  userPartition: (userId: string): string => `USER#${userId}`,
  /** The user by id (Bot API look-ups, erasure): its bot and external id, and the erase task once one began. */
  userRef: (userId: string): Key => ({ pk: keys.userPartition(userId), sk: 'USER' }),
  /**
   * An erased user's session and realtime tokens are refused while they could still be valid. Keyed by a hash
   * of the user id: what an erasure leaves behind names no id.
   */
  revokedUser: (userId: string): Key => ({ pk: `REVOKED#${createHash('sha256').update(userId).digest('hex')}`, sk: 'REVOKED' }),
  /** A direct upload of the user (pending until its object lands): erasure finds it here even with no object yet. */
  uploadRef: (userId: string, fileId: string): Key => ({ pk: keys.userPartition(userId), sk: `UPLOAD#${fileId}` }),
  /** A socket of the user (written at $connect): erasure closes it even before it subscribed. */
  connectionRef: (userId: string, connectionId: string): Key => ({ pk: keys.userPartition(userId), sk: keys.connectionRefPrefix + connectionId }),
  connectionRefPrefix: 'CONN#',
  /** A user's export in the bucket: removed by TTL a day after it was written, its object then deleted. */
  exportObject: (userId: string, taskId: string): Key => ({ pk: keys.userPartition(userId), sk: `EXPORT#${taskId}` }),
  /** A background task of the Bot API (erase, export). */
  task: (taskId: string): Key => ({ pk: `TASK#${taskId}`, sk: 'TASK' }),
  /** A user's storage quota: bytes of pending or unsent client uploads, and of today's (policies/storage-quota.ts). */
  uploadQuota: (userId: string): Key => ({ pk: keys.userPartition(userId), sk: 'UPLOAD_QUOTA' }),
  /**
   * A file whose bytes were given back to its user's quota on its removal: a redelivered REMOVE gives none again.
   * Keyed by a hash of the file id: written after an erasure deleted the file, it names no id.
   */
  quotaRelease: (fileId: string): Key => ({ pk: `RELEASED#${createHash('sha256').update(fileId).digest('hex')}`, sk: 'RELEASED' }),
  /** Per-user counters (how many chats). */
  userStats: (userId: string): Key => ({ pk: keys.userPartition(userId), sk: 'STATS' }),
  /** An idempotency key of one side of a chat (client_message_id / Idempotency-Key), kept 24 h by TTL. */
  idempotency: (chatId: string, side: 'user' | 'bot', key: string): Key => ({ pk: keys.idempotencyPartition(chatId), sk: `${side}#${key}` }),
  /** The owner's copy of a chat: the chat list is one strongly consistent Query of the owner's partition. */
  chat: (userId: string, chatId: string): Key => ({ pk: keys.userPartition(userId), sk: `CHAT#${chatId}` }),
  chatPrefix: 'CHAT#',
  /**
   * gsi2 of a chat: its bot's chats by last activity (the Bot API's list, newest first), spread over `shards`
   * write shards by chat id, so no index key takes every message of a bot (docs/scale.md "Hot keys").
   * A chat stays in its shard for life; the list reads every shard and merges.
   */
  chatActivity: (botId: string, at: string, chatId: string, shards: number): { gsi2pk: string; gsi2sk: string } => ({
    gsi2pk: keys.botChats(botId, chatListShard(chatId, shards)),
    gsi2sk: keys.activityAt(at, chatId),
  }),
  /** A chat's activity sort key: its last activity, then its id (unique, so the list's cursor is exact). */
  activityAt: (at: string, chatId: string): string => `${at}#${chatId}`,
  /** gsi2 partition of one shard of a bot's chats. */
  botChats: (botId: string, shard: number): string => `BOT#${botId}#${shard}`,
  /** gsi1 partition of a bot's chats before they were sharded: read while the move runs (flows/migrate.ts). */
  legacyBotChats: (botId: string): string => `BOT#${botId}`,
  /** Who owns a chat: tells 403 from 404 on the error path, and serves the Bot API. */
  chatPointer: (chatId: string): Key => ({ pk: keys.chatPartition(chatId), sk: 'META' }),
  /** Messages sit in the owner's partition, so any item a history Query returns proves ownership. */
  message: (userId: string, chatId: string, messageId: string): Key => ({
    pk: keys.userPartition(userId),
    sk: keys.messagePrefix(chatId) + messageId,
  }),
  /**
   * Markers below and above a chat's messages ('!' < digits < '~'): a history Query always returns at
   * least one of them for an owned chat, so an empty page needs no second read.
   */
  /** Every message sort key of a chat starts so (markers included). */
  messagePrefix: (chatId: string): string => `MSG#${chatId}#`,
  chatStart: (userId: string, chatId: string): Key => ({ pk: keys.userPartition(userId), sk: keys.messagePrefix(chatId) + '!' }),
  chatEnd: (userId: string, chatId: string): Key => ({ pk: keys.userPartition(userId), sk: keys.messagePrefix(chatId) + '~' }),
  file: (fileId: string): Key => ({ pk: `FILE#${fileId}`, sk: 'FILE' }),
  /** A chat's unread reminder: the burst it is due for, and whether it fired (flows/reminders.ts). */
  reminder: (chatId: string): Key => ({ pk: keys.chatPartition(chatId), sk: 'REMINDER' }),
  /**
   * One side of a chat typing: written at most every TYPING_INTERVAL_MS, its stream record is the publication.
   * In the user's partition, as the chat's messages are: one partition's records come in order on one stream
   * shard, so a typing never reaches the user after the reply it came before.
   */
  typing: (userId: string, chatId: string, sender: 'bot' | 'operator'): Key => ({ pk: keys.userPartition(userId), sk: `TYPING#${chatId}#${sender}` }),
  /** An open WebSocket connection and the user bound to it. */
  connection: (connectionId: string): Key => ({ pk: `CONN#${connectionId}`, sk: 'CONN' }),
  /** A connection subscribed to a channel: fan-out is one Query of `SUB#<channel>`. */
  subscription: (channel: string, connectionId: string): Key => ({ pk: keys.subscribers(channel), sk: `CONN#${connectionId}` }),
  /** The partition of a channel's subscriptions. */
  subscribers: (channel: string): string => `SUB#${channel}`,
  /** One fixed window of a rate limit (`name` per `subject`), expired by TTL. */
  rateWindow: (name: string, subject: string, window: number): Key => ({ pk: keys.ratePartition(name, subject), sk: `W#${window}` }),
  /** Every window of one rate limit of one subject. */
  ratePartition: (name: string, subject: string): string => `${RATE_KEY_PREFIX}${name}#${subject}`,
  /** The partition of a chat's own items (its pointer, reminder); an erasure empties it. */
  chatPartition: (chatId: string): string => `CHAT#${chatId}`,
  /** The partition of a chat's idempotency keys. */
  idempotencyPartition: (chatId: string): string => `IDEM#${chatId}`,
  /**
   * A bot marked slow: its webhook receiver timed out lately, so its deliveries go to the slow lane
   * (flows/webhook-lanes.ts). Its own partition, apart from the bot's: only the webhook functions read it.
   */
  slowWebhooks: (botId: string): Key => ({ pk: `SLOWHOOK#${botId}`, sk: 'SLOW' }),
  /** gsi1 partition that lists every bot (CLI). */
  botsIndex: 'BOTS',
  /** The layout marker: which key layout every item is at (entities/layout.ts, written by flows/migrate.ts). */
  layout: (): Key => ({ pk: 'LAYOUT', sk: 'LAYOUT' }),
  /**
   * The publisher's hold on a user's channel: its records wait in the redo queue, so the channel's next records
   * go after them (entities/stream-holds.ts). In the channel's subscriptions partition: the Query that finds the
   * sockets to publish to finds it too. One key per channel: no two users share it.
   */
  publisherHold: (channel: string): Key => ({ pk: keys.subscribers(channel), sk: 'HOLD#publisher' }),
  /**
   * A channel's stream position (Centrifuge's offset and epoch) and the position each socket's live publications
   * start from (entities/channel-stream.ts). In the channel's subscriptions partition: the publisher's Query of
   * the channel's sockets reads it with them. One key per channel: no two users share it.
   */
  channelStream: (channel: string): Key => ({ pk: keys.subscribers(channel), sk: 'STREAM' }),
  /** One positioned publication of a channel, kept for recovery until its TTL: by epoch, then offset (padded, so they sort). */
  channelHistory: (channel: string, epoch: string, offset: number): Key => ({ pk: keys.channelHistoryPartition(channel), sk: keys.channelHistoryAt(epoch, offset) }),
  channelHistoryPartition: (channel: string): string => `HIST#${channel}`,
  channelHistoryAt: (epoch: string, offset: number): string => `${epoch}#${String(offset).padStart(16, '0')}`,
};

/** The key layout this code writes (the layout marker records it): 2 = users in their own partition, the chat list on sharded gsi2. */
export const LAYOUT_VERSION = 2;

/** The write shard of a chat in its bot's list: a hash of its id, so chats spread evenly whatever their ids look like. */
export function chatListShard(chatId: string, shards: number): number {
  return createHash('sha256').update(chatId).digest().readUInt32BE(0) % shards;
}

/** `entity` attribute on every item: stream filters and the publisher select items by it. */
export type Entity =
  | 'bot'
  | 'client_key'
  | 'user'
  | 'chat'
  | 'chat_pointer'
  | 'chat_marker'
  | 'message'
  | 'file'
  | 'connection'
  | 'subscription'
  | 'user_stats'
  | 'idempotency'
  | 'rate'
  | 'typing'
  | 'reminder'
  | 'user_ref'
  | 'revoked_user'
  | 'upload_ref'
  | 'connection_ref'
  | 'task'
  | 'export'
  | 'layout'
  | 'stream_hold'
  | 'channel_stream'
  | 'channel_history'
  | 'slow_webhooks';
