// AWS's published quotas that sizing a stage meets (docs/sizing.md, made by bin/sizing.ts; lib/stack-config.ts's
// checks), each once, with the page that lists it. Dated: AWS changes quotas, and this machine cannot reach the
// pages, so check each source before relying on a figure. Per account and Region unless said otherwise.

export interface Quota {
  value: number;
  /** Whether Service Quotas (or AWS Support) can raise it. */
  adjustable: boolean;
  what: string;
  source: string;
}

const API_GATEWAY = 'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html';
const LAMBDA = 'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html';
const DYNAMODB = 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html';
const WARM = 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html';

export const AWS_QUOTAS_AS_OF = '2026-11-27';

export const AWS_QUOTAS = {
  apiGatewayRequestsPerSecond: {
    value: 10_000,
    adjustable: true,
    what: 'API Gateway requests per second across HTTP, REST and WebSocket APIs and WebSocket callbacks (@connections posts); burst 5,000',
    source: API_GATEWAY,
  },
  webSocketNewConnectionsPerSecond: { value: 500, adjustable: true, what: 'new WebSocket connections per second', source: API_GATEWAY },
  lambdaConcurrentExecutions: { value: 1_000, adjustable: true, what: 'Lambda concurrent executions', source: LAMBDA },
  lambdaScalingPer10Seconds: { value: 1_000, adjustable: false, what: 'concurrent executions each function may add every 10 seconds', source: LAMBDA },
  dynamoTableReadUnitsPerSecond: { value: 40_000, adjustable: true, what: 'read request units per second of an on-demand table', source: DYNAMODB },
  dynamoTableWriteUnitsPerSecond: { value: 40_000, adjustable: true, what: 'write request units per second of an on-demand table', source: DYNAMODB },
  dynamoPartitionReadUnitsPerSecond: { value: 3_000, adjustable: false, what: 'read units per second of one partition (one partition key value at most)', source: DYNAMODB },
  dynamoPartitionWriteUnitsPerSecond: { value: 1_000, adjustable: false, what: 'write units per second of one partition (one partition key value at most)', source: DYNAMODB },
  dynamoWarmReadUnitsPerSecond: { value: 12_000, adjustable: false, what: 'warm read throughput of a new on-demand table (the least a setting can give)', source: WARM },
  dynamoWarmWriteUnitsPerSecond: { value: 4_000, adjustable: false, what: 'warm write throughput of a new on-demand table (the least a setting can give)', source: WARM },
} satisfies Record<string, Quota>;
