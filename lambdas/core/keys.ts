// Every key of the single table in one place (docs/architecture.md "Data model" explains the layout).

export interface Key {
  pk: string;
  sk: string;
}

export const keys = {
  bot: (botId: string): Key => ({ pk: `BOT#${botId}`, sk: 'BOT' }),
  clientKey: (clientKey: string): Key => ({ pk: `KEY#${clientKey}`, sk: 'KEY' }),
  /** The user record lives under its bot, keyed by external id: unique per bot, found in one read. */
  user: (botId: string, externalId: string): Key => ({ pk: `BOT#${botId}`, sk: `EXT#${externalId}` }),
  /** Per-user counters (how many chats). */
  userStats: (userId: string): Key => ({ pk: `USER#${userId}`, sk: 'STATS' }),
  /** An idempotency key of one side of a chat (client_message_id / Idempotency-Key), kept 24 h by TTL. */
  idempotency: (chatId: string, side: 'user' | 'bot', key: string): Key => ({ pk: `IDEM#${chatId}`, sk: `${side}#${key}` }),
  /** The owner's copy of a chat: the chat list is one strongly consistent Query of the owner's partition. */
  chat: (userId: string, chatId: string): Key => ({ pk: `USER#${userId}`, sk: `CHAT#${chatId}` }),
  chatPrefix: 'CHAT#',
  /** Who owns a chat: tells 403 from 404 on the error path, and serves the Bot API. */
  chatPointer: (chatId: string): Key => ({ pk: `CHAT#${chatId}`, sk: 'META' }),
  /** Messages sit in the owner's partition, so any item a history Query returns proves ownership. */
  message: (userId: string, chatId: string, messageId: string): Key => ({
    pk: `USER#${userId}`,
    sk: `MSG#${chatId}#${messageId}`,
  }),
  /**
   * Markers below and above a chat's messages ('!' < digits < '~'): a history Query always returns at
   * least one of them for an owned chat, so an empty page needs no second read.
   */
  chatStart: (userId: string, chatId: string): Key => ({ pk: `USER#${userId}`, sk: `MSG#${chatId}#!` }),
  chatEnd: (userId: string, chatId: string): Key => ({ pk: `USER#${userId}`, sk: `MSG#${chatId}#~` }),
  file: (fileId: string): Key => ({ pk: `FILE#${fileId}`, sk: 'FILE' }),
  /** One side of a chat typing: written at most every TYPING_INTERVAL_MS, its stream record is the publication. */
  typing: (chatId: string, sender: 'bot' | 'operator'): Key => ({ pk: `CHAT#${chatId}`, sk: `TYPING#${sender}` }),
  /** An open WebSocket connection and the user bound to it. */
  connection: (connectionId: string): Key => ({ pk: `CONN#${connectionId}`, sk: 'CONN' }),
  /** A connection subscribed to a channel: fan-out is one Query of `SUB#<channel>`. */
  subscription: (channel: string, connectionId: string): Key => ({ pk: `SUB#${channel}`, sk: `CONN#${connectionId}` }),
  /** gsi1 partition that lists every bot (CLI). */
  botsIndex: 'BOTS',
};

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
  | 'typing';
