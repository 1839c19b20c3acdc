// The ONE table schema: CDK (lib/stack.ts) and the local stack (lib/local/resources.ts) both build from it.
// Plain data only, so the local stack never loads aws-cdk-lib.

export interface KeyAttribute {
  name: string;
  type: 'S';
}

export interface TableSchema {
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  /** Items with this numeric attribute (epoch seconds) expire (connections, subscriptions, idempotency keys). */
  ttlAttribute: string;
  stream: 'NEW_AND_OLD_IMAGES';
  /** ALL copies the whole item into the index; KEYS_ONLY only the keys, so a change of any other attribute writes nothing to it. */
  globalSecondaryIndexes: { indexName: string; partitionKey: KeyAttribute; sortKey: KeyAttribute; projection: 'ALL' | 'KEYS_ONLY' }[];
}

export const TABLE_SCHEMA: TableSchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  ttlAttribute: 'ttl',
  stream: 'NEW_AND_OLD_IMAGES',
  globalSecondaryIndexes: [
    // gsi1: the list of bots (CLI), and a bot's chats as they were before the list was sharded (read while the move runs).
    { indexName: 'gsi1', partitionKey: { name: 'gsi1pk', type: 'S' }, sortKey: { name: 'gsi1sk', type: 'S' }, projection: 'ALL' },
    // gsi2: a bot's chats by last activity (Bot API), write-sharded; keys only, so a read mark writes nothing here.
    { indexName: 'gsi2', partitionKey: { name: 'gsi2pk', type: 'S' }, sortKey: { name: 'gsi2sk', type: 'S' }, projection: 'KEYS_ONLY' },
  ],
};
