// The ONE route table: CDK makes one Lambda + route per entry, the local HTTP gateway serves the same entries.
// `dynamodb`/`s3` list exactly the IAM actions a handler uses; CDK grants nothing else.

export type DynamoAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'ConditionCheckItem';
export type S3Action = 's3:GetObject' | 's3:PutObject';

export interface RouteDef {
  /** Stable id: names the Lambda construct and the benchmark key. */
  id: string;
  method: 'GET' | 'POST';
  /** API Gateway path template, e.g. /api/client/chats/{chat_id}/messages */
  path: string;
  /** Handler module, relative to the project root; it exports `handler`. */
  entry: string;
  dynamodb: DynamoAction[];
  /** Whether the handler queries the gsi1 index (grants the index ARN too). */
  index?: boolean;
  s3?: S3Action[];
}

const CLIENT = '/api/client';

export const ROUTES: RouteDef[] = [
  {
    id: 'create_session',
    method: 'POST',
    path: `${CLIENT}/session`,
    entry: 'lambdas/client/create-session.ts',
    dynamodb: ['GetItem', 'UpdateItem'],
  },
  {
    id: 'list_chats',
    method: 'GET',
    path: `${CLIENT}/chats`,
    entry: 'lambdas/client/list-chats.ts',
    dynamodb: ['GetItem', 'Query'],
  },
  {
    id: 'create_chat',
    method: 'POST',
    path: `${CLIENT}/chats`,
    entry: 'lambdas/client/create-chat.ts',
    dynamodb: ['GetItem', 'PutItem'],
  },
  {
    id: 'list_messages',
    method: 'GET',
    path: `${CLIENT}/chats/{chat_id}/messages`,
    entry: 'lambdas/client/list-messages.ts',
    dynamodb: ['GetItem', 'Query'],
    s3: ['s3:GetObject'],
  },
  {
    id: 'create_message',
    method: 'POST',
    path: `${CLIENT}/chats/{chat_id}/messages`,
    entry: 'lambdas/client/create-message.ts',
    dynamodb: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem'],
    s3: ['s3:GetObject'],
  },
  {
    id: 'mark_read',
    method: 'POST',
    path: `${CLIENT}/chats/{chat_id}/read`,
    entry: 'lambdas/client/mark-read.ts',
    dynamodb: ['GetItem', 'UpdateItem'],
  },
  {
    id: 'upload_file',
    method: 'POST',
    path: `${CLIENT}/files`,
    entry: 'lambdas/client/upload-file.ts',
    dynamodb: ['GetItem', 'PutItem'],
    s3: ['s3:PutObject', 's3:GetObject'],
  },
];

/** CORS of the HTTP API: any origin (the bot's allowed_origins is checked by session creation itself). */
export const CORS = {
  allowOrigins: ['*'],
  allowMethods: ['GET', 'POST', 'OPTIONS'] as const,
  allowHeaders: ['authorization', 'content-type'],
  maxAgeSeconds: 600,
};
