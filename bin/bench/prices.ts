// AWS list prices the cost phase multiplies its units by: us-east-1, arm64, on-demand, the first (largest)
// volume tier of each, in US dollars per unit. Dated: AWS changes prices, so a figure is only as good as this
// table. They were last compared with the pricing pages on `as_of`; this machine cannot reach them, so check
// each source before relying on a figure.
import type { UnitKey } from './cost-model';

export interface PriceTable {
  as_of: string;
  region: string;
  architecture: string;
  source: string;
  /** USD per unit, and where the price is listed. */
  units: Record<UnitKey | 'websocket_connection_minutes', { usd: number; per: string; source: string }>;
}

export const PRICES: PriceTable = {
  as_of: '2026-11-25',
  region: 'us-east-1',
  architecture: 'arm64',
  source: 'AWS pricing pages (below, per unit), on-demand list prices, first volume tier, no free tier',
  units: {
    http_requests: { usd: 1.0 / 1e6, per: 'HTTP API request (first 300 million a month; 512 KB metering)', source: 'https://aws.amazon.com/api-gateway/pricing/' },
    lambda_invocations: { usd: 0.2 / 1e6, per: 'Lambda request', source: 'https://aws.amazon.com/lambda/pricing/' },
    lambda_gb_seconds: { usd: 0.0000133334, per: 'GB-second of Lambda duration, arm64 (first 7.5 billion a month)', source: 'https://aws.amazon.com/lambda/pricing/' },
    dynamodb_write_units: { usd: 0.625 / 1e6, per: 'DynamoDB on-demand write request unit (standard table class)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
    dynamodb_read_units: { usd: 0.125 / 1e6, per: 'DynamoDB on-demand read request unit (standard table class)', source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/' },
    websocket_messages: { usd: 1.0 / 1e6, per: 'WebSocket API message, sent or received, in 32 KB units (first billion a month)', source: 'https://aws.amazon.com/api-gateway/pricing/' },
    websocket_connection_minutes: { usd: 0.25 / 1e6, per: 'WebSocket API connection minute', source: 'https://aws.amazon.com/api-gateway/pricing/' },
    sqs_requests: { usd: 0.4 / 1e6, per: 'SQS standard queue request (64 KB chunks; first 100 billion a month)', source: 'https://aws.amazon.com/sqs/pricing/' },
    log_bytes: { usd: 0.5 / 1e9, per: 'byte ingested by CloudWatch Logs, standard class ($0.50 per GB, GB taken as 10^9 bytes)', source: 'https://aws.amazon.com/cloudwatch/pricing/' },
    secrets_manager_calls: { usd: 0.05 / 1e4, per: 'Secrets Manager API call', source: 'https://aws.amazon.com/secrets-manager/pricing/' },
  },
};
