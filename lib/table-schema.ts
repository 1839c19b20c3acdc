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
  globalSecondaryIndexes: { indexName: string; partitionKey: KeyAttribute; sortKey: KeyAttribute }[];
}

export const TABLE_SCHEMA: TableSchema = {
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  ttlAttribute: 'ttl',
  stream: 'NEW_AND_OLD_IMAGES',
  globalSecondaryIndexes: [
    // gsi1: a bot's chats by last activity (Bot API) and the list of bots (CLI); never on a client hot path.
    { indexName: 'gsi1', partitionKey: { name: 'gsi1pk', type: 'S' }, sortKey: { name: 'gsi1sk', type: 'S' } },
  ],
};
